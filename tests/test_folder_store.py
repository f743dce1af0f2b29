"""A folder in object storage (core.data.folder, an s3:// address read through pyarrow's filesystems) against a real S3
server (moto's, in this process): the same rows, key and release as the same files on disk; an object changed after
the folder was opened, an unreachable endpoint, a missing prefix and an address pyarrow cannot open end in one
sentence that never shows the address's options or credentials."""

from __future__ import annotations

import json
import pickle
import socket
import time
import uuid
from pathlib import Path

import boto3
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from moto.server import ThreadedMotoServer

from core.cli import main
from core.data import folder as folder_module
from core.data.folder import open_folder
from core.data.folder_key import key_of
from core.data.synthetic import write_folder
from core.errors import DataError


@pytest.fixture(scope="module")
def endpoint():
    """host:port of an S3 server on this machine, for the module's tests."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"{host}:{port}"
    server.stop()


@pytest.fixture
def s3(endpoint, monkeypatch):
    """A new, empty bucket on the server, and a client to fill it; credentials from the environment, as in use."""
    for name, value in (("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test"),
                        ("AWS_DEFAULT_REGION", "us-east-1")):
        monkeypatch.setenv(name, value)
    client = boto3.client("s3", endpoint_url=f"http://{endpoint}")
    bucket = f"b{uuid.uuid4().hex}"
    client.create_bucket(Bucket=bucket)
    return client, bucket, endpoint


def _address(endpoint: str, bucket: str, prefix: str = "rows") -> str:
    return f"s3://{bucket}/{prefix}?endpoint_override={endpoint}&scheme=http"


def _upload(client, bucket: str, local: Path, prefix: str = "rows") -> None:
    for path in sorted(local.iterdir()):
        client.put_object(Bucket=bucket, Key=f"{prefix}/{path.name}", Body=path.read_bytes())


def _both(tmp_path: Path, s3, n: int = 6_000, csv: bool = False) -> tuple[str, str]:
    """A synthetic folder of three files on disk (as CSV when `csv`) and the same files in the bucket."""
    client, bucket, endpoint = s3
    local = tmp_path / "rows"
    write_folder(str(local), n, 3, "robust", theta_norm=1.5, seed=2, file_rows=2_500)
    if csv:
        for path in sorted(local.glob("*.parquet")):
            pq.read_table(path).to_pandas().to_csv(path.with_suffix(".csv"), index=False, float_format="%.17g")
            path.unlink()
    _upload(client, bucket, local)
    return str(local), _address(endpoint, bucket)


@pytest.mark.parametrize("csv", [False, True])
def test_a_folder_in_the_bucket_reads_the_rows_of_the_same_files_on_disk(tmp_path, s3, csv):
    local, remote = (open_folder(root) for root in _both(tmp_path, s3, csv=csv))
    assert (remote.n, remote.features, remote.response) == (local.n, local.features, local.response) == (
        6_000, ("x0", "x1", "x2"), "y")
    assert len(remote.parts) == 3 and [p.rows for p in remote.parts] == [p.rows for p in local.parts]
    names = ("y", "x2", "x0")
    for a, b in ((2_400, 5_100), (0, 6_000), (4_999, 5_001)):  # ranges spanning two or three files
        assert np.array_equal(remote.columns(a, b, names), local.columns(a, b, names))
    assert remote.root == f"s3://{s3[1]}/rows" and "endpoint" not in repr(remote)


def test_a_folder_in_the_bucket_pickles_and_is_read_again_by_a_fresh_worker(tmp_path, s3):
    _, address = _both(tmp_path, s3)
    folder = open_folder(address)
    again = pickle.loads(pickle.dumps(folder))
    assert again == folder == open_folder(address) and hash(again) == hash(folder)  # equal: the same files, unchanged
    folder_module._from_uri.cache_clear()  # as on a worker that has not opened the store
    assert np.array_equal(again.columns(2_000, 3_000, ("x1",)), folder.columns(2_000, 3_000, ("x1",)))


def test_the_key_of_a_folder_in_the_bucket_is_that_of_the_same_files_on_disk(tmp_path, s3):
    local, remote = _both(tmp_path, s3)
    assert key_of(open_folder(remote, None), 1_000) == key_of(open_folder(local, None), 1_000)


def test_the_command_line_releases_from_the_bucket_what_it_releases_from_disk(tmp_path, s3, capsys):
    docs = []
    for root in _both(tmp_path, s3):
        status = main(["release", "--folder", root, "--block-rows", "4096", "--coordinate", "x1", "--epsilon", "2",
                       "--delta", "1e-6", "--seed", "3"])
        out = capsys.readouterr()
        assert status == 0, out.err
        docs.append(json.loads(out.out))
    local, remote = docs
    assert local.pop("source").startswith(f"the files of the folder {tmp_path}")
    assert remote.pop("source").startswith(f"the files of the folder s3://{s3[1]}/rows")
    assert remote == local and local["fit"]["status"] == "minimiser"


def test_an_object_changed_or_gone_after_the_folder_was_opened_ends_the_read(tmp_path, s3):
    client, bucket, _ = s3
    local, address = _both(tmp_path, s3)
    folder = open_folder(address)
    assert folder.columns(2_400, 2_600, ("x0",)).shape == (200, 1)
    key, body = "rows/part-00001.parquet", (Path(local) / "part-00001.parquet").read_bytes()
    other = tmp_path / "other"
    write_folder(str(other), 6_000, 3, "robust", theta_norm=1.5, seed=9, file_rows=2_500)
    same_size = (other / "part-00001.parquet").read_bytes()
    assert len(same_size) == len(body) and same_size != body
    stamp = client.head_object(Bucket=bucket, Key=key)["LastModified"]
    client.put_object(Bucket=bucket, Key=key, Body=same_size)  # other rows, the same size: its ETag tells
    if client.head_object(Bucket=bucket, Key=key)["LastModified"] != stamp:
        pytest.skip("the rewrite fell in the next second, where its time of change tells it too; run again")
    with pytest.raises(DataError, match="part-00001.parquet changed, vanished or could not be read"):
        folder.columns(2_400, 2_600, ("x0",))
    time.sleep(1.0)  # S3 keeps the time of change in whole seconds
    client.put_object(Bucket=bucket, Key=key, Body=body)  # the rows as they were, but rewritten: refused too
    with pytest.raises(DataError, match="part-00001.parquet changed"):
        folder.columns(2_400, 2_600, ("x0",))
    table = pq.read_table(Path(local) / "part-00001.parquet")
    sink = pa.BufferOutputStream()
    pq.write_table(table.slice(1), sink)
    client.put_object(Bucket=bucket, Key=key, Body=sink.getvalue().to_pybytes())  # one row fewer
    folder = open_folder(address)
    client.delete_object(Bucket=bucket, Key=key)
    with pytest.raises(DataError, match="part-00001.parquet changed, vanished"):
        folder.columns(0, folder.n, ("y",))


def _one_sentence(e: pytest.ExceptionInfo, *hidden: str) -> str:
    message = str(e.value)
    assert "\n" not in message and message.count(". ") == 0 and not any(h in message for h in hidden), message
    return message


@pytest.mark.slow  # pyarrow's S3 client tries three times over about 6 s before it gives up
def test_an_endpoint_that_does_not_answer_is_one_sentence_without_the_address_options(s3):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DataError) as e:
        open_folder(_address(f"127.0.0.1:{port}", s3[1]))
    message = _one_sentence(e, "endpoint_override", "?", str(port))
    assert message.startswith(f"could not reach s3://{s3[1]}/rows (OSError); check the address")


def test_a_missing_prefix_or_bucket_and_an_address_pyarrow_cannot_open_are_one_sentence(s3):
    _, bucket, endpoint = s3
    for address, where in ((_address(endpoint, bucket, "none"), f"s3://{bucket}/none"),
                           (_address(endpoint, "no-such-bucket"), "s3://no-such-bucket/rows")):
        with pytest.raises(DataError) as e:
            open_folder(address)
        assert _one_sentence(e, "?", endpoint).startswith(
            f"no Parquet or CSV files (names ending .parquet or .csv) in {where};")
    secret = "zz-secret-zz"  # z, s, r, t: a bucket's random name (b and hex digits) cannot hold it by chance
    for address in (f"nosuch://host/rows?token={secret}", f"s3://{bucket}/rows?endpoint_override={endpoint}&token={secret}",
                    "s3:///rows?endpoint_override=x"):
        with pytest.raises(DataError) as e:
            open_folder(address)
        assert _one_sentence(e, "token", secret, endpoint).startswith("pyarrow cannot open ")
    with pytest.raises(DataError) as e:
        open_folder(f"s3://KEYID:se/cret@{bucket}/rows?endpoint_override={endpoint}&scheme=http")
    message = _one_sentence(e, "KEYID", "se/cret", "cret", endpoint)
    assert message.startswith(f"put the credentials for s3://{bucket}/rows in the environment")


def test_a_csv_cell_in_the_bucket_that_is_not_a_number_is_refused_by_its_column(s3):
    client, bucket, endpoint = s3
    rows = ["a,b,y"] + [f"{i % 7 / 10},{i % 5 / 10},{i % 3}" for i in range(5_000)]
    rows[4_000] = "0.1,secret-value,1"
    client.put_object(Bucket=bucket, Key="rows/p.csv", Body=("\n".join(rows) + "\n").encode())
    folder = open_folder(_address(endpoint, bucket))
    with pytest.raises(DataError, match="column b of p.csv has a cell that is not a number") as e:
        folder.columns(0, folder.n, ("a", "b", "y"))
    assert "secret" not in str(e.value)
