"""Test helpers shared by the unit and integration tests: a loopback Kafka broker, a
Confluent-compatible schema registry, the tables the integration tests write, and the
writer's row-path step for tests of the column-wise encoders (`row_path`)."""
