# SASL_SSL with SCRAM-SHA-512 for the benchmarks (bench/replicated.sh --security): one PKI made
# with the openssl CLI serves Apache Kafka and Spool alike (the same CA, the same broker
# certificate and key, the same cipher negotiation: TLS 1.3, OpenSSL's defaults on both sides but
# the JVM's TLS stack in Kafka), a SASL_SSL listener beside each broker's PLAINTEXT one (which
# stays the inter-broker listener, on both), and one SCRAM-SHA-512 user created through the Kafka
# protocol (Kafka's kafka-configs, AlterUserScramCredentials) on both. Source it; it defines:
#
#   bench_pki DIR                      CA (DIR/ca.pem) and DIR/broker.pem (key, certificate for
#                                      localhost and 127.0.0.1, CA), the PEM key store both take
#   bench_security_overrides DIR       the keys both brokers take (Kafka's names), one per line
#   bench_create_scram_user KAFKA_DIR BOOTSTRAP LOG
#                                      the SCRAM-SHA-512 user, through a PLAINTEXT listener
#   bench_sasl_ssl_args DIR            spool-loadgen's -S settings for the SASL_SSL listener
#   bench_librdkafka_dir DIR           DIR/librdkafka.so.1: librdkafka 2.12.1 of the confluent-kafka
#                                      wheel (scripts/peers/fetch-python.sh), for LD_LIBRARY_PATH
#
# Why a newer librdkafka: Debian's 2.0.2 (the loadgen's build) sends its SCRAM client-final nonce
# with its own nonce repeated in front (fixed in librdkafka 2.10); Kafka checks that nonce exactly
# since 3.9 (CVE-2024-56128), so 2.0.2 cannot log in to Kafka 4.x with SCRAM ("invalid
# credentials"). Spool, like Kafka before 3.9, only checks that it ends with the server's nonce.
# The --security runs put 2.12.1 under the same loadgen binary (the C API is stable) for every
# row, plaintext included, so the two brokers and the two listeners see the same client.

bench_scram_user=bench
bench_scram_password=bench-secret

bench_pki() {
    local d=$1
    (
        cd "$d" &&
            openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=spool-bench-ca \
                -keyout ca.key -out ca.pem &&
            openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout broker.key -out broker.csr &&
            printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.ext &&
            openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
                -extfile san.ext -out broker.crt &&
            cat broker.key broker.crt ca.pem >broker.pem
    ) >/dev/null 2>&1
}

bench_security_overrides() {
    echo "ssl.keystore.type=PEM"
    echo "ssl.keystore.location=$1/broker.pem"
    echo "sasl.enabled.mechanisms=SCRAM-SHA-512"
    # Kafka wants a login module for the mechanism on the listener; Spool reads SCRAM
    # credentials from its metadata store and ignores it.
    echo "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"
}

bench_create_scram_user() {
    local kafka_dir=$1 bootstrap=$2 log=$3 class
    # ConfigCommand moved from the core jar (4.1: kafka.admin) to the tools jar (4.4).
    for class in org.apache.kafka.tools.ConfigCommand kafka.admin.ConfigCommand; do
        timeout -k 10 120 java -Xmx256m -Xshare:auto -XX:TieredStopAtLevel=1 \
            -Dlog4j2.configurationFile="$root/tests/compat/java/log4j2.properties" \
            -cp "$kafka_dir/libs/*" "$class" --bootstrap-server "$bootstrap" \
            --alter --entity-type users --entity-name "$bench_scram_user" \
            --add-config "SCRAM-SHA-512=[iterations=4096,password=$bench_scram_password]" \
            >>"$log" 2>&1 && return 0
    done
    return 1
}

bench_sasl_ssl_args() {
    echo "-S security.protocol=SASL_SSL -S sasl.mechanisms=SCRAM-SHA-512"
    echo "-S sasl.username=$bench_scram_user -S sasl.password=$bench_scram_password"
    echo "-S ssl.ca.location=$1/ca.pem"
}

bench_librdkafka_dir() {
    local venv lib
    venv=$(bash "$root/scripts/peers/fetch-python.sh")/venv || return 1
    lib=$(ls "$venv"/lib/python3*/site-packages/confluent_kafka.libs/librdkafka*.so.1 2>/dev/null | head -n1)
    [[ -n "$lib" ]] || return 1
    mkdir -p "$1" && ln -sf "$lib" "$1/librdkafka.so.1"
}
