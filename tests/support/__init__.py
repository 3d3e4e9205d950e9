"""Test helpers shared by the unit and integration tests: a loopback Kafka broker, a
Confluent-compatible schema registry, and the tables the integration tests write."""
