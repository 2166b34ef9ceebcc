"""A probe of an object store no request can reach (nothing listens on its port, or the client
refuses plain http) raises ConnectionRefusedError: nothing it was asked to write can have
landed, so a run that fails there removes nothing and ends at once (runner/run.py)."""

from __future__ import annotations

import json

import pytest
from hpcio import _engine
from servers import free_port

STORES = ("azure", "gcs", "s3")
ALLOW_HTTP = {"s3": "aws_allow_http", "azure": "azure_allow_http", "gcs": "google_allow_http"}


@pytest.fixture(autouse=True)
def _no_allow_http_in_the_environment(monkeypatch):
    for name in ("AWS_ALLOW_HTTP", "AZURE_ALLOW_HTTP", "GOOGLE_ALLOW_HTTP"):
        monkeypatch.delenv(name, raising=False)


def _target(store: str, **more: str) -> _engine.Target:
    """A target of `store` whose http:// endpoint is a port of 127.0.0.1 nothing listens on,
    with explicit credentials (GCS's a key that asks for no token), so no client looks for a
    cloud metadata service."""
    endpoint = f"http://127.0.0.1:{free_port()}"
    if store == "s3":
        url, options = "s3://bucket1/probe", {
            "aws_endpoint": endpoint, "aws_access_key_id": "hpcio",
            "aws_secret_access_key": "hpcio-secret", "aws_region": "us-east-1",
        }  # fmt: skip
    elif store == "azure":
        url, options = "az://container1/probe", {
            "azure_storage_account_name": "devstoreaccount1",
            "azure_storage_account_key": "aHBjaW8=",
            "azure_storage_endpoint": f"{endpoint}/devstoreaccount1",
        }  # fmt: skip
    else:
        key = {"disable_oauth": True, "gcs_base_url": endpoint, "private_key": "",
               "private_key_id": "", "client_email": ""}  # fmt: skip
        url, options = "gs://bucket1/probe", {
            "google_base_url": endpoint, "google_service_account_key": json.dumps(key),
        }  # fmt: skip
    return _engine.Target(url, options={**options, **more})


@pytest.mark.parametrize("store", STORES)
def test_an_http_endpoint_nothing_listens_on_cannot_be_connected_to(store):
    # The endpoint's http:// is used as given (allow_http follows it): the refusal is the
    # closed port's, not the client's "builder error".
    with pytest.raises(ConnectionRefusedError) as refused:
        _target(store).probe(write=True)
    assert refused.value.strerror == "cannot connect to the endpoint"


@pytest.mark.parametrize("store", STORES)
def test_allow_http_set_false_is_named_as_the_refusal(store):
    with pytest.raises(ConnectionRefusedError) as refused:
        _target(store, **{ALLOW_HTTP[store]: "false"}).probe(write=True)
    assert refused.value.strerror == (
        "the endpoint is http:// and allow_http is false: set allow_http=true or use https://"
    )
