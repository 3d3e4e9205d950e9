"""A real cluster: a standalone master and worker on loopback from PySpark's own launcher,
executors in their own JVMs and Python workers (PYSPARK_PYTHON: this interpreter). Batch
writes (simple, and avro through the test registry) and a streaming query restarted from
its checkpoint, with a re-run of a committed batch; the topics hold every row, the
watermarks, and no duplicate beyond what docs/guides/delivery.md allows (a re-run
batch, byte-identical). Drivers are child processes; one cluster for the module.

Its executors share nothing with the driver: an interpreter of their own holding the
wheel, built and installed as docs/getting-started.md ("Installing") and
docs/guides/deploying.md say, and workers without this checkout on any path."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.support.runtime_jobs import run_job
from tests.support.spark_cluster import StandaloneCluster
from tests.support.spark_job import add_file
from tests.support.topic_check import avro_ids, simple_topic

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
# What a checkout holds besides its sources: build output, caches, environments.
_NOT_SOURCE = shutil.ignore_patterns(
    ".git", "build", "dist", "site", "*.egg-info", ".*cache", ".hypothesis", ".venv", "venv"
)


def _install_command(start: str) -> list[str]:
    """The line of the install guide (docs/getting-started.md) that starts with `start`,
    as arguments."""
    for line in (ROOT / "docs" / "getting-started.md").read_text().splitlines():
        if line.startswith(start):
            return shlex.split(line.split("#", 1)[0])
    raise AssertionError(f"docs/getting-started.md has no line starting {start!r}")


@pytest.fixture(scope="module")
def node_python(tmp_path_factory) -> str:
    """A node's interpreter: a virtual environment of its own with the wheel built by the
    install guide's command and installed as its "Managed runtimes" part says for a node whose
    PySpark is Spark's own (`--no-deps`, then the dependencies by hand; executors import
    PySpark from Spark's pyspark.zip), and nothing else."""
    work = tmp_path_factory.mktemp("node")
    build = _install_command("pip wheel --no-deps -w dist .")
    # Built from a copy without the checkout's build artifacts: pip builds in the source
    # tree, and setuptools packs whatever its build/ holds, modules since moved or
    # deleted included; the copy also leaves no build/ behind in the checkout.
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=_NOT_SOURCE)
    subprocess.run(
        [sys.executable, "-m", *build[:-2], str(work / "dist"), str(source)],
        check=True,
        capture_output=True,
    )
    (wheel,) = (work / "dist").glob("ticdc_sink-*-py3-none-any.whl")
    subprocess.run([sys.executable, "-m", "venv", str(work / "node")], check=True)
    python = str(work / "node" / "bin" / "python")
    package = _install_command("pip install --no-deps ticdc_sink-")
    dependencies = _install_command('pip install "pyarrow')
    for command in ([*package[:-1], str(wheel)], dependencies):
        done = subprocess.run([python, "-m", *command], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    return python


@pytest.fixture(scope="module")
def cluster():
    """One cluster for the module, its workers without this checkout on any path: every
    test's executors run `node_python` (the wheel alone)."""
    with StandaloneCluster(checkout=False) as running:
        yield running


def test_executors_with_only_the_wheel_write(cluster, node_python, broker, topics):
    write = {
        "write": "batch",
        "rows": 300,
        "partitions": 3,
        "options": options(broker, topics, "node"),
    }
    probe, written = run_job(
        [{"probe": "executor"}, write],
        master=cluster.master,
        executor_python=node_python,
    )
    assert written == {"ok": True}, cluster.log()
    assert probe["python"] == node_python
    assert Path(probe["ticdc_sink"]).is_relative_to(Path(node_python).parents[1])
    assert simple_topic(broker, topics("cluster_shop_node")).ids == list(range(300))


def options(broker, topics, table: str, **extra: str) -> dict[str, str]:
    return {
        "kafka.bootstrap.servers": broker.bootstrap,
        "topic": topics("cluster_{schema}_{table}"),
        "partition-num": "3",
        "partition": "index-value",
        "database": "shop",
        "table": table,
        "primary-key": "id",
        **extra,
    }


def test_batch_writes_on_a_cluster_keep_every_row(cluster, node_python, broker, topics, registry):
    avro = options(broker, topics, "avro", protocol="avro")
    avro["schema-registry"] = registry.url
    results = run_job(
        [
            {
                "write": "batch",
                "rows": 3000,
                "partitions": 4,
                "options": options(broker, topics, "simple"),
            },
            {"write": "batch", "rows": 500, "partitions": 2, "options": avro},
        ],
        master=cluster.master,
        executor_python=node_python,
    )
    assert results == [{"ok": True}] * 2, cluster.log()
    simple = simple_topic(broker, topics("cluster_shop_simple"))
    assert simple.ids == list(range(3000))  # nothing lost, nothing twice
    assert len(simple.commit_ts) == 1  # one commit ts for the job
    # the job's watermark reached every partition, after the rows
    assert simple.watermarks == {p: simple.commit_ts for p in range(3)}
    assert avro_ids(broker, registry, topics("cluster_shop_avro")) == list(range(500))


def test_a_stream_on_a_cluster_restarts_from_its_checkpoint(
    cluster, node_python, broker, topics, tmp_path
):
    source, checkpoint = tmp_path / "in", tmp_path / "chk"
    source.mkdir()
    step = {
        "write": "stream",
        "source": str(source),
        "options": options(broker, topics, "stream", checkpointLocation=str(checkpoint)),
    }
    add_file(source, 0)
    add_file(source, 1)
    run = {"master": cluster.master, "executor_python": node_python}
    assert run_job([step], **run) == [{"ok": True}], cluster.log()  # batches 0 and 1
    # The sink committed batch 1, then Spark "crashed" before recording it: the restart
    # re-runs batch 1 from the same offsets, then runs batch 2.
    for name in ("1", ".1.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    add_file(source, 2)
    assert run_job([step], **run) == [{"ok": True}], cluster.log()

    topic = simple_topic(broker, topics("cluster_shop_stream"))
    assert len(topic.commit_ts) == 3
    # (Files written in the same instant may make either file batch 0.)
    batch1 = sorted(e.data["id"] for _, e in topic.rows if e.commit_ts == topic.commit_ts[1])
    assert batch1 in ([0, 0, 1, 1, 2, 2], [100, 100, 101, 101, 102, 102])
    assert topic.ids == sorted([0, 1, 2, 100, 101, 102, *batch1[::2], 200, 201, 202])
    copies = Counter((r.partition, r.key, r.value) for r, e in topic.rows if e.data["id"] in batch1)
    assert list(copies.values()) == [2, 2, 2]  # the re-run is byte-identical
    for marks in topic.watermarks.values():
        assert marks == topic.commit_ts  # one per batch, never backwards
