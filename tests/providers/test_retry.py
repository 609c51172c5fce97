"""Backoff waits: exponential, jittered, capped; Retry-After honoured but capped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from agent_cli.providers.retry import (
    DEFAULT_ATTEMPTS,
    DEFAULT_BASE_SECONDS,
    DEFAULT_CAP_SECONDS,
    DEFAULT_RETRY_AFTER_CAP_SECONDS,
    RetryPolicy,
    parse_retry_after,
)

NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_defaults_follow_the_spec() -> None:
    policy = RetryPolicy()
    assert (policy.attempts, policy.base, policy.cap) == (3, 0.5, 8.0)
    assert (DEFAULT_ATTEMPTS, DEFAULT_BASE_SECONDS, DEFAULT_CAP_SECONDS) == (3, 0.5, 8.0)
    assert policy.retry_after_cap == DEFAULT_RETRY_AFTER_CAP_SECONDS


def test_backoff_doubles_until_the_cap() -> None:
    policy = RetryPolicy(jitter="none")
    assert [policy.delay(n) for n in range(1, 8)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


def test_absurd_attempt_numbers_stay_at_the_cap() -> None:
    assert RetryPolicy(jitter="none").delay(10_000) == DEFAULT_CAP_SECONDS


@pytest.mark.parametrize("attempt", [1, 2, 3, 4, 6])
def test_full_jitter_stays_between_zero_and_the_backoff(attempt: int) -> None:
    backoff = RetryPolicy(jitter="none").delay(attempt)
    delays = [RetryPolicy(jitter="full").delay(attempt) for _ in range(200)]
    assert all(0.0 <= delay <= backoff for delay in delays)
    assert len(set(delays)) > 1, "full jitter should vary"


@pytest.mark.parametrize("attempt", [1, 2, 3, 4, 6])
def test_equal_jitter_waits_at_least_half_the_backoff(attempt: int) -> None:
    backoff = RetryPolicy(jitter="none").delay(attempt)
    delays = [RetryPolicy().delay(attempt) for _ in range(200)]
    assert all(backoff / 2 <= delay <= backoff for delay in delays)
    assert len(set(delays)) > 1, "equal jitter should vary"


def test_retry_after_wins_over_backoff_but_is_capped() -> None:
    policy = RetryPolicy()
    assert policy.delay(1, retry_after=2.5) == 2.5
    assert policy.delay(3, retry_after=0.05) == 0.05
    assert policy.delay(1, retry_after=3600.0) == DEFAULT_RETRY_AFTER_CAP_SECONDS
    assert policy.delay(1, retry_after=-4.0) == 0.0
    assert RetryPolicy(retry_after_cap=1.0).delay(1, retry_after=5.0) == 1.0


def test_allows_counts_retries_after_the_first_try() -> None:
    policy = RetryPolicy(attempts=2)
    assert [policy.allows(n) for n in (1, 2, 3)] == [True, True, False]
    assert not RetryPolicy(attempts=0).allows(1)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("5", 5.0), (" 12 ", 12.0), ("0", 0.0), ("1.5", 1.5)],
)
def test_retry_after_in_seconds(header: str, seconds: float) -> None:
    assert parse_retry_after(header) == seconds


@pytest.mark.parametrize("header", [None, "", "   ", "-1", "soon", "nan", "inf", "Mon, 99 Foo"])
def test_unusable_retry_after_is_none(header: str | None) -> None:
    assert parse_retry_after(header, now=NOW) is None


def test_retry_after_as_http_date() -> None:
    header = format_datetime(NOW + timedelta(seconds=42), usegmt=True)
    assert parse_retry_after(header, now=NOW) == 42.0


def test_retry_after_date_in_the_past_means_now() -> None:
    header = format_datetime(NOW - timedelta(minutes=5), usegmt=True)
    assert parse_retry_after(header, now=NOW) == 0.0


def test_retry_after_date_without_zone_is_taken_as_gmt() -> None:
    assert parse_retry_after("Thu, 02 Jan 2025 03:04:15 -0000", now=NOW) == 10.0
