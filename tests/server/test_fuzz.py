"""Schemathesis over the server's own OpenAPI spec, a bounded number of examples per operation:
whatever a client sends, the answer is never a 5xx."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig

from tests.server.conftest import Served


@pytest.fixture(scope="module")
def fuzzed(index_copy):
    served = Served(index_copy("fuzz"), {})
    yield served
    served.close()


@pytest.fixture(scope="module")
def api_schema(fuzzed):
    # valid and invalid inputs from the fuzzing phase; the exhaustive coverage phase is left
    # out to keep the run within the suite's time budget
    config = SchemathesisConfig.from_dict({"generation": {"mode": "all"},
                                           "phases": {"coverage": {"enabled": False}}})
    return schemathesis.openapi.from_url(f"{fuzzed.url}/openapi.json", config=config)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_no_input_gets_a_server_error(case):
    response = case.call(timeout=30)
    case.validate_response(response, checks=[not_a_server_error])
