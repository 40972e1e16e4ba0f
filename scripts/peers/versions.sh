# Pinned versions of the real Kafka clients and broker the compatibility suite and the benchmarks
# run against. Sourced by the fetch scripts and the test drivers: change a version here and the
# next fetch lands in a fresh cache directory (<peer>-<version>), leaving the old one untouched.
SPOOL_KAFKA_VERSION=${SPOOL_KAFKA_VERSION:-4.1.1}     # Maven Central: kafka-clients, kafka-tools, kafka_2.13 (client + broker)
SPOOL_KAFKAJS_VERSION=2.2.4   # npm
SPOOL_FRANZ_VERSION=v1.22.3   # Go module github.com/twmb/franz-go (kgo); kadm pinned in go.mod
SPOOL_CONFLUENT_KAFKA_VERSION=2.12.1  # PyPI confluent-kafka (bundles librdkafka 2.12.1), tests/compat/security/requirements.txt
SPOOL_LIBRDKAFKA_VERSION=2.0.2  # Debian bookworm librdkafka-dev / kcat (installed by setup.sh)
