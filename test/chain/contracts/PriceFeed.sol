// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Chainlink-style AggregatorV3 price feed for tests.
/// @notice Round ids follow Chainlink's proxies: `(phaseId << 64) | aggregatorRound`, aggregator rounds counting
/// from 1, so they are large and not portable between phases. Unknown rounds revert with "No data present", as
/// Chainlink's aggregators do; so does `latestRoundData()` before the first round.
contract PriceFeed {
    struct Round {
        int256 answer;
        uint64 startedAt;
        uint64 updatedAt;
    }

    uint8 public constant decimals = 8;
    uint256 public constant version = 6;
    uint16 public immutable phaseId;
    address public owner;
    uint64 public latestAggregatorRound;
    string public description;
    mapping(uint64 => Round) private _rounds;

    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);
    event NewRound(uint256 indexed roundId, address indexed startedBy, uint256 startedAt);

    error NotOwner(address caller);

    constructor(string memory description_, uint16 phaseId_, address owner_) {
        description = description_;
        phaseId = phaseId_ == 0 ? 1 : phaseId_;
        owner = owner_ == address(0) ? msg.sender : owner_;
    }

    /// @param updatedAt the round's timestamp; 0 means the block's.
    function postRound(int256 answer, uint256 updatedAt) external returns (uint80 roundId) {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        uint64 at = uint64(updatedAt == 0 ? block.timestamp : updatedAt);
        uint64 next = latestAggregatorRound + 1;
        latestAggregatorRound = next;
        _rounds[next] = Round(answer, at, at);
        roundId = _roundId(next);
        emit NewRound(roundId, msg.sender, at);
        emit AnswerUpdated(answer, roundId, at);
    }

    function latestRound() external view returns (uint256) {
        return latestAggregatorRound == 0 ? 0 : _roundId(latestAggregatorRound);
    }

    function latestAnswer() external view returns (int256) {
        return _rounds[latestAggregatorRound].answer;
    }

    function latestTimestamp() external view returns (uint256) {
        return _rounds[latestAggregatorRound].updatedAt;
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        return _round(latestAggregatorRound);
    }

    function getRoundData(uint80 roundId_)
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        if (uint16(roundId_ >> 64) != phaseId) revert("No data present");
        return _round(uint64(roundId_));
    }

    function _round(uint64 aggregatorRound)
        private
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        Round memory r = _rounds[aggregatorRound];
        if (aggregatorRound == 0 || r.updatedAt == 0) revert("No data present");
        roundId = _roundId(aggregatorRound);
        return (roundId, r.answer, r.startedAt, r.updatedAt, roundId);
    }

    function _roundId(uint64 aggregatorRound) private view returns (uint80) {
        return uint80((uint256(phaseId) << 64) | aggregatorRound);
    }
}
