#!/usr/bin/env python3
"""confluent-kafka Python (librdkafka bundled in its wheel) for security_clients.py: runs each
case of a cases file (security_clients.py writes it) and prints one line per case,
`RESULT {"name", "outcome", "detail"}`, outcome one of ok, auth_failed, topic_authz,
handshake_failed, error. ok means every record produced was consumed back with its content.

    python confluent_client.py --cases FILE   (the venv's python of scripts/peers/fetch-python.sh)
"""

import argparse
import json
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

TIMEOUT = 20  # seconds a case may take before it is an error


def config(case):
    c = {"bootstrap.servers": case["bootstrap"], "ssl.ca.location": case["ca"],
         "socket.timeout.ms": 10000, "reconnect.backoff.max.ms": 1000}
    if case.get("cert"):
        c["ssl.certificate.location"] = case["cert"]
        c["ssl.key.location"] = case["key"]
    sasl = case.get("sasl")
    if not sasl:
        c["security.protocol"] = "SSL"
        return c
    c["security.protocol"] = "SASL_SSL"
    c["sasl.mechanisms"] = sasl["mechanism"]
    if sasl["mechanism"] == "OAUTHBEARER":
        token = sasl["token"]
        c["oauth_cb"] = lambda _config: (token, time.time() + 3600, sasl["principal"], {})
    else:
        c["sasl.username"] = sasl["username"]
        c["sasl.password"] = sasl["password"]
    return c


def classify(errors):
    """The outcome of a failed case from the errors librdkafka reported (error_cb, delivery)."""
    text = " | ".join(f"{e.name()}: {e.str()}" for e in errors)
    codes = {e.code() for e in errors}
    if KafkaError.TOPIC_AUTHORIZATION_FAILED in codes:
        return "topic_authz", text
    if KafkaError._AUTHENTICATION in codes or KafkaError.SASL_AUTHENTICATION_FAILED in codes:
        return "auth_failed", text
    if KafkaError._SSL in codes or "SSL handshake failed" in text or "certificate" in text:
        return "handshake_failed", text
    return "error", text or "timed out"


def run(case):
    errors = []
    on_error = errors.append
    producer = Producer({**config(case), "error_cb": on_error, "acks": "all",
                         "message.timeout.ms": TIMEOUT * 1000})
    topic, n = case["topic"], case["count"]
    delivered = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(err)
        else:
            delivered.append(msg.offset())

    deadline = time.time() + TIMEOUT
    for i in range(n):
        producer.produce(topic, key=str(i), value=f"{case['name']}-{i}", on_delivery=on_delivery)
    # Stops at the first error: librdkafka would otherwise retry a refused handshake until the
    # message timeout.
    while len(delivered) < n and not errors and time.time() < deadline:
        producer.poll(0.1)
    producer.purge()
    producer.flush(1)
    if errors or len(delivered) < n:
        return classify(errors)

    consumer = Consumer({**config(case), "error_cb": on_error, "group.id": f"sec-{case['name']}",
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        got = []
        while len(got) < n and not errors and time.time() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                errors.append(msg.error())
                continue
            got.append((msg.key().decode(), msg.value().decode()))
    finally:
        consumer.close()
    want = [(str(i), f"{case['name']}-{i}") for i in range(n)]
    if got != want:
        return "error", f"consumed {len(got)} of {n} records back{': ' + classify(errors)[1] if errors else ''}; first differing: {next((g for g, w in zip(got, want) if g != w), None)}"
    return "ok", f"{n} produced and consumed back"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", required=True)
    args = parser.parse_args()
    with open(args.cases) as f:
        cases = json.load(f)
    for case in cases:
        start = time.time()
        try:
            outcome, detail = run(case)
        except KafkaException as e:
            outcome, detail = classify([e.args[0]])
        except Exception as e:  # noqa: BLE001 - reported, the driver fails the case
            outcome, detail = "error", repr(e)
        print("RESULT " + json.dumps({"name": case["name"], "outcome": outcome, "detail": detail,
                                      "ms": int((time.time() - start) * 1000)}), flush=True)


if __name__ == "__main__":
    main()
