// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Test double of Robinhood Chain's ERC-8056 `Stock` token (Scaled UI Amount).
/// @notice `balanceOf`/`totalSupply` are raw and never rebase; shares = raw * uiMultiplier() / 1e18.
/// A staged `updateMultiplier(new, effectiveAt)` emits `UIMultiplierUpdated` once, at announcement; the new value
/// takes effect silently when `block.timestamp >= effectiveAt`.
/// Storage (slots in the artifact's storageLayout): `_uiMultiplier` is the value in force *before* `_effectiveAt`,
/// `_newUIMultiplier` the value from `_effectiveAt` on. A raw `eth_getStorageAt` read of `_uiMultiplier` is therefore
/// not the value in force once `_effectiveAt` has passed: apply the same rule as `uiMultiplier()`.
/// Pausing: `pause()`/`unpause()` set `tokenPaused()`; `setGlobalPause(bool)` stands in for the issuer-wide switch;
/// `paused()` is true when either is set, and blocks transfers (not the issuer's mint/burn).
/// `oraclePaused()` is advisory only, as on mainnet.
contract Stock {
    uint256 internal constant ONE = 1e18;

    uint256 private _uiMultiplier;
    uint256 private _newUIMultiplier;
    uint256 private _effectiveAt;
    address public owner;
    bool private _globalPaused;
    bool private _tokenPaused;
    bool private _oraclePaused;
    uint256 private _totalSupply;
    mapping(address => uint256) private _balances;
    mapping(address => mapping(address => uint256)) private _allowances;
    string private _name;
    string private _symbol;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event TransferWithScaledUI(address indexed from, address indexed to, uint256 value, uint256 uiValue);
    event UIMultiplierUpdated(uint256 oldMultiplier, uint256 newMultiplier, uint256 effectiveAtTimestamp);
    event Paused();
    event Unpaused();
    event OraclePaused();
    event OracleUnpaused();
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    error NotOwner(address caller);
    error TokenIsPaused();
    error InsufficientBalance(address account, uint256 balance, uint256 needed);
    error InsufficientAllowance(address spender, uint256 allowance, uint256 needed);
    error InvalidMultiplier(uint256 multiplier);
    error EffectiveAtInPast(uint256 effectiveAt, uint256 nowTimestamp);
    error ZeroAddress();

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        _;
    }

    constructor(string memory name_, string memory symbol_, address issuer) {
        _name = name_;
        _symbol = symbol_;
        owner = issuer == address(0) ? msg.sender : issuer;
        _uiMultiplier = ONE;
        _newUIMultiplier = ONE;
        emit OwnershipTransferred(address(0), owner);
    }

    // ERC-20

    function name() external view returns (string memory) { return _name; }
    function symbol() external view returns (string memory) { return _symbol; }
    function decimals() external pure returns (uint8) { return 18; }
    function totalSupply() external view returns (uint256) { return _totalSupply; }
    function balanceOf(address account) external view returns (uint256) { return _balances[account]; }
    function allowance(address holder, address spender) external view returns (uint256) {
        return _allowances[holder][spender];
    }

    function approve(address spender, uint256 value) external returns (bool) {
        _allowances[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transfer(address to, uint256 value) external returns (bool) {
        if (paused()) revert TokenIsPaused();
        _move(msg.sender, to, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        if (paused()) revert TokenIsPaused();
        uint256 allowed = _allowances[from][msg.sender];
        if (allowed != type(uint256).max) {
            if (allowed < value) revert InsufficientAllowance(msg.sender, allowed, value);
            _allowances[from][msg.sender] = allowed - value;
        }
        _move(from, to, value);
        return true;
    }

    // ERC-8056

    function uiMultiplier() public view returns (uint256) {
        return block.timestamp >= _effectiveAt ? _newUIMultiplier : _uiMultiplier;
    }

    function newUIMultiplier() external view returns (uint256) { return _newUIMultiplier; }
    function effectiveAt() external view returns (uint256) { return _effectiveAt; }

    function balanceOfUI(address account) external view returns (uint256) {
        return _balances[account] * uiMultiplier() / ONE;
    }

    function totalSupplyUI() external view returns (uint256) {
        return _totalSupply * uiMultiplier() / ONE;
    }

    function updateMultiplier(uint256 newMultiplier) external onlyOwner {
        if (newMultiplier == 0) revert InvalidMultiplier(newMultiplier);
        uint256 old = uiMultiplier();
        _uiMultiplier = newMultiplier;
        _newUIMultiplier = newMultiplier;
        _effectiveAt = block.timestamp;
        _emitMultiplierUpdated(old, newMultiplier, block.timestamp);
    }

    function updateMultiplier(uint256 newMultiplier, uint256 effectiveAtTimestamp) external onlyOwner {
        if (newMultiplier == 0) revert InvalidMultiplier(newMultiplier);
        if (effectiveAtTimestamp < block.timestamp) revert EffectiveAtInPast(effectiveAtTimestamp, block.timestamp);
        uint256 old = uiMultiplier();
        _uiMultiplier = old;
        _newUIMultiplier = newMultiplier;
        _effectiveAt = effectiveAtTimestamp;
        _emitMultiplierUpdated(old, newMultiplier, effectiveAtTimestamp);
    }

    function _emitMultiplierUpdated(uint256 old, uint256 newMultiplier, uint256 effectiveAtTimestamp) internal virtual {
        emit UIMultiplierUpdated(old, newMultiplier, effectiveAtTimestamp);
    }

    // Issuer controls

    function paused() public view returns (bool) { return _globalPaused || _tokenPaused; }
    function tokenPaused() external view returns (bool) { return _tokenPaused; }
    function oraclePaused() external view returns (bool) { return _oraclePaused; }

    function pause() external onlyOwner {
        _tokenPaused = true;
        emit Paused();
    }

    function unpause() external onlyOwner {
        _tokenPaused = false;
        emit Unpaused();
    }

    function setGlobalPause(bool value) external onlyOwner {
        _globalPaused = value;
    }

    function pauseOracle() external onlyOwner {
        _oraclePaused = true;
        emit OraclePaused();
    }

    function unpauseOracle() external onlyOwner {
        _oraclePaused = false;
        emit OracleUnpaused();
    }

    function mint(address to, uint256 value) external onlyOwner {
        _move(address(0), to, value);
    }

    function burn(address from, uint256 value) external onlyOwner {
        _move(from, address(0), value);
    }

    /// Test-chain only (not in the real `Stock`): many mints in one transaction, so benchmarks can seed a large
    /// history quickly. Each emits the same `Transfer` and `TransferWithScaledUI` logs as `mint`.
    function mintBatch(address[] calldata to, uint256 value) external onlyOwner {
        for (uint256 i = 0; i < to.length; i++) {
            _move(address(0), to[i], value);
        }
    }

    /// Test-chain only (not in the real `Stock`): the issuer moves `value` from each `from[i]` to `to[i]` in one
    /// transaction (no allowance), so benchmarks can seed sales and transfers between holders quickly.
    function moveBatch(address[] calldata from, address[] calldata to, uint256 value) external onlyOwner {
        for (uint256 i = 0; i < from.length; i++) {
            _move(from[i], to[i], value);
        }
    }

    function transferOwnership(address newOwner) external onlyOwner {
        if (newOwner == address(0)) revert ZeroAddress();
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    // ERC-165: ERC-165 itself and the three ERC-8056 interface ids Robinhood's tokens report.

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == 0x01ffc9a7 || interfaceId == 0xa60bf13d || interfaceId == 0x4bd27648
            || interfaceId == 0xd890fd71;
    }

    function _move(address from, address to, uint256 value) internal {
        if (from == address(0)) {
            if (to == address(0)) revert ZeroAddress();
            _totalSupply += value;
        } else {
            uint256 balance = _balances[from];
            if (balance < value) revert InsufficientBalance(from, balance, value);
            unchecked { _balances[from] = balance - value; }
        }
        if (to == address(0)) {
            _totalSupply -= value;
        } else {
            _balances[to] += value;
        }
        emit Transfer(from, to, value);
        emit TransferWithScaledUI(from, to, value, value * uiMultiplier() / ONE);
    }
}

/// @notice The same token emitting the older ERC-8056 draft's 4-argument event
/// `UIMultiplierUpdated(old, new, setAtTimestamp, effectiveAtTimestamp)` (as BNB Chain's tokens do).
contract LegacyStock is Stock {
    event UIMultiplierUpdated(
        uint256 oldMultiplier, uint256 newMultiplier, uint256 setAtTimestamp, uint256 effectiveAtTimestamp
    );

    constructor(string memory name_, string memory symbol_, address issuer) Stock(name_, symbol_, issuer) {}

    function _emitMultiplierUpdated(uint256 old, uint256 newMultiplier, uint256 effectiveAtTimestamp)
        internal
        override
    {
        emit UIMultiplierUpdated(old, newMultiplier, block.timestamp, effectiveAtTimestamp);
    }
}
