"""Test helpers shared by the unit and integration tests. A test imports its helpers from
here, never from another test module or from benchmarks/ (tests/unit/project/test_test_imports.py).

    fake_producer.py   FakeProducer: the sink's producer, recording what was sent
    fake_kafka.py      confluent_kafka's clients under a real KafkaProducer (FakeCluster)
    fake_consumer.py   confluent_kafka's Consumer under the reader's TopicLog (FakeConsumer)
    fake_registry.py   FakeRegistry: an in-memory schema registry for the encoders
    batches.py         the column-wise tests' table of every type, its plan and batches
    strategies.py      the shared hypothesis strategies (random batches, all-types rows)
    schemas.py         TableSchemas spelled in tests: col, table_of, USERS, ALL_TYPES_TABLE,
                       SIMPLE_DOC_USER
    checksums.py       crc32_bitwise: the reference CRC-32 for the row checksum tests
    row_path.py        the row path, the reference the column-wise paths are checked against
    column_path.py     a read's outcome by the column-wise and the row path, compared
    read_log.py        FakeTopicLog: topics in memory for the reader's unit tests
    reference_table.py the benchmarks' reference table (the benchmarks import it from here)
    tables.py          the tables the integration tests write through every protocol
    broker.py          TopicAdmin (topics made, read back) and Tansu, the demo's broker
    kafka.py           Apache Kafka from Maven Central (KRaft, one node), killable, proxied:
                       the integration tests' broker
    apicurio.py        Apicurio Registry from Maven Central (Confluent-compatible API):
                       the integration tests' registry
    maven.py           Java components fetched with mvn into the test cache
    components.py      `python -m tests.support.components fetch`: Kafka and Apicurio
                       fetched ahead, their versions and java printed
    topics.py          TopicNames: topic names no other test of the run uses
    spark_kafka.py     Spark's own Kafka connector and spark-avro for the running PySpark
    flink.py           PyFlink in its own environment, Flink's Kafka connector; runs
                       flink_job.py (PyFlink's interpreter) and returns its changelogs
    kafka_connect.py   Kafka Connect standalone with Debezium's JDBC sink connector
    postgres.py        PostgreSQL in a temporary directory on loopback
    doc_pages.py       the docs' generated parts (docs/hooks.py renders them at build time)
    consumers.py       who reads what we write: each interop consumer's version and
                       settings (docs/reference/consumers.md renders it)
    changelog.py       the interop tests' change stream as consumers must see it
    proxy.py           a TCP proxy that injects broker faults
    registry.py        the in-house Confluent-compatible registry (auth, faults, counts)
    faults.py          `ticdc_faults`: the data source with injected faults (retries, kills)
    spark_job.py       Spark writes in a child process (own master, killable driver)
    spark_cluster.py   Spark servers on loopback (standalone cluster, Spark Connect)
    runtime_jobs.py    writes by a Spark driver of their own (runtime tests)
    paths.py           where the repository's files are (root, package, docs, golden files)
    topic_check.py     what a topic written by the runtime tests holds, decoded
    wheel_smoke.py     the built distributions, checked as a user gets them
    wheel_write.py     one simple and one avro write from the installed wheel alone
    changes.py         a TiDB table in memory and its TiCDC change rows: the mirror's oracle
    lakehouse.py       Spark sessions with Delta Lake and Iceberg (the mirror's tests, bench)
    pipelines.py       Spark Declarative Pipelines with a MERGE-capable test catalog (auto CDC)
"""
