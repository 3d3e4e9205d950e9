"""Test helpers shared by the unit and integration tests: a loopback Kafka broker."""
