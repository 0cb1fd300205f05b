// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Small counterparts for the classification tests: a DEX router, a lending vault, a bridge gateway and a contract
/// that no list names. Each moves `Stock` tokens with `transferFrom` (pulled from the caller) and `transfer`.
interface IERC20Like {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
    function transfer(address to, uint256 value) external returns (bool);
}

/// Swaps at a fixed amount: pulls `amountIn` of `tokenIn`, pays `amountOut` of `tokenOut` from its reserve.
contract MiniRouter {
    function swapExactTokensForTokens(address tokenIn, uint256 amountIn, address tokenOut, uint256 amountOut) external {
        require(IERC20Like(tokenIn).transferFrom(msg.sender, address(this), amountIn), "in");
        require(IERC20Like(tokenOut).transfer(msg.sender, amountOut), "out");
    }
}

/// Collateral: deposits are kept per holder and can be withdrawn.
contract LendingVault {
    mapping(address => mapping(address => uint256)) public collateral;

    function supply(address token, uint256 amount) external {
        require(IERC20Like(token).transferFrom(msg.sender, address(this), amount), "supply");
        collateral[msg.sender][token] += amount;
    }

    function withdraw(address token, uint256 amount) external {
        collateral[msg.sender][token] -= amount;
        require(IERC20Like(token).transfer(msg.sender, amount), "withdraw");
    }
}

/// A bridge gateway: outbound transfers are escrowed; inbound ones are released by the relayer.
contract BridgeGateway {
    function outboundTransfer(address token, uint256 amount) external {
        require(IERC20Like(token).transferFrom(msg.sender, address(this), amount), "outbound");
    }

    function finalizeInboundTransfer(address token, address to, uint256 amount) external {
        require(IERC20Like(token).transfer(to, amount), "inbound");
    }
}

/// A contract on no list: tokens sent to it are held for the sender.
contract Unlisted {
    mapping(address => mapping(address => uint256)) public held;

    function stake(address token, uint256 amount) external {
        require(IERC20Like(token).transferFrom(msg.sender, address(this), amount), "stake");
        held[msg.sender][token] += amount;
    }
}
