"""One retry policy for every delivery (issue 27.3): delays double up to a cap, and which refusals
are for good (a 4xx other than 408/429) versus worth retrying (408, 429, 5xx, no answer)."""

from __future__ import annotations

import io
import itertools
import urllib.error

import pytest
import requests

from lineage_quality.producer.backoff import (
    ALERT_BACKOFF,
    FORWARD_BACKOFF,
    Backoff,
    refused_for_good,
)


def test_delays_double_up_to_the_cap() -> None:
    policy = Backoff(initial=0.5, maximum=3.0)
    assert list(itertools.islice(policy.delays(), 6)) == [0.5, 1.0, 2.0, 3.0, 3.0, 3.0]
    assert policy.delay(0) == 0.5 and policy.delay(3) == 3.0
    assert policy.delay(10_000) == 3.0  # no overflow however long it failed
    assert (FORWARD_BACKOFF.initial, FORWARD_BACKOFF.maximum) == (0.5, 30.0)
    assert (ALERT_BACKOFF.initial, ALERT_BACKOFF.maximum) == (1.0, 300.0)
    with pytest.raises(ValueError):
        Backoff(initial=0.0)
    with pytest.raises(ValueError):
        Backoff(initial=2.0, maximum=1.0)


def http_error(status: int) -> urllib.error.HTTPError:
    return urllib.error.HTTPError("http://x", status, "no", {}, io.BytesIO())  # type: ignore[arg-type]


def requests_error(status: int) -> requests.HTTPError:
    response = requests.Response()
    response.status_code = status
    return requests.HTTPError(response=response)


@pytest.mark.parametrize("make", [http_error, requests_error])
def test_only_a_4xx_other_than_408_and_429_is_for_good(make: object) -> None:
    for status in (400, 401, 403, 404, 413, 422):
        assert refused_for_good(make(status))  # type: ignore[operator]
    for status in (408, 429, 500, 502, 503):
        assert not refused_for_good(make(status))  # type: ignore[operator]
    assert not refused_for_good(ConnectionRefusedError())
    assert not refused_for_good(TimeoutError())
