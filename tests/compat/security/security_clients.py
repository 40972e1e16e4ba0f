#!/usr/bin/env python3
"""Security with real clients (issue #32): KafkaJS, franz-go and confluent-kafka Python against
one spool-broker over SSL, mTLS (ssl.client.auth=required), and SASL_SSL with PLAIN,
SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER, with the StandardAuthorizer on.

Setup (once, one broker for every case): a CA, the broker's certificate and two client
certificates made with the openssl CLI, plus a second CA nobody trusts; an RSA key whose JWKS the
broker reads from a file (OAUTHBEARER) and the JWTs signed with it (and one signed by a stranger
key). The broker's admin (PLAIN, super user) creates the SCRAM users (AlterUserScramCredentials),
the topics and the ACLs through the Kafka protocol with confluent-kafka's AdminClient.

Cells, for each client x listener/mechanism, each a case the client runs on its own:
  ok            produce N records (acks=all), consume them back from the partition: content
                and count equal
  wrong_secret  a wrong password (a token signed by an unknown key for OAUTHBEARER): the client
                reports an authentication failure (KafkaJS with OAUTHBEARER: the connection is
                closed, see cases_for)
  no_acl        an authenticated user without any ACL: TOPIC_AUTHORIZATION_FAILED
  untrusted_ca  (SSL) the client trusts another CA: the TLS handshake fails
  no_cert       (mTLS) the client has no certificate: the TLS handshake fails

    security_clients.py --bin SPOOL_BROKER --kafkajs-dir DIR --franz-dir DIR
        (run with the confluent-kafka venv's python: scripts/peers/fetch-python.sh)
Prints PASS/FAIL per cell and "N passed, M failed"; exits 1 unless every cell passed.
"""

import argparse
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient,
                                   NewTopic, ResourcePatternType, ResourceType,
                                   ScramCredentialInfo, ScramMechanism,
                                   UserScramCredentialUpsertion)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
BROKER_SH = os.path.join(ROOT, "tests", "fixtures", "broker.sh")
STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
VALIDATOR = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
RECORDS = 20
CLIENTS = ("kafkajs", "franz", "confluent")
SCRAM_ITERATIONS = 4096
# Listener/mechanism columns: (name, SASL mechanism or None, user with ACLs, user without).
COLUMNS = [("SSL", None, "ANONYMOUS", None),
           ("mTLS", None, "mtlsuser", "mtlsnoacl"),
           ("PLAIN", "PLAIN", "plainuser", "plainnoacl"),
           ("SCRAM-SHA-256", "SCRAM-SHA-256", "scram256user", "scram256noacl"),
           ("SCRAM-SHA-512", "SCRAM-SHA-512", "scram512user", "scram512noacl"),
           ("OAUTHBEARER", "OAUTHBEARER", "oauthuser", "oauthnoacl")]
ADMIN = ("admin", "admin-secret")


def sh(args, **kw):
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, **kw)
    if proc.returncode != 0:
        raise RuntimeError(f"{args[0]} failed: {proc.stdout}{proc.stderr}")
    return proc.stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def password(user):
    return f"{user}-secret"


# ---- PKI and OAUTHBEARER keys --------------------------------------------------------------------
def make_pki(d):
    def run(*args):
        sh(["openssl", *args], cwd=d)

    for ca in ("ca", "rogue-ca"):
        run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            f"/CN=spool-{ca}", "-keyout", f"{ca}.key", "-out", f"{ca}.pem")
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name, subject, ext in (("broker", "/CN=localhost", ["-extfile", "san.ext"]),
                               ("mtlsuser", "/O=Spool/CN=mtlsuser", []),
                               ("mtlsnoacl", "/O=Spool/CN=mtlsnoacl", [])):
        run("req", "-newkey", "rsa:2048", "-nodes", "-subj", subject, "-keyout", f"{name}.key",
            "-out", f"{name}.csr")
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", *ext, "-out", f"{name}.crt")
    with open(os.path.join(d, "broker.pem"), "w") as out:
        for part in ("broker.key", "broker.crt", "ca.pem"):
            with open(os.path.join(d, part)) as f:
                out.write(f.read())


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_jwks(d):
    """jwks.json of an RSA key (kid k1), and a stranger key with the same kid."""
    for key in ("jwt.key", "stranger.key"):
        sh(["openssl", "genrsa", "-out", key, "2048"], cwd=d)
    modulus = sh(["openssl", "rsa", "-in", "jwt.key", "-noout", "-modulus"], cwd=d)
    n = bytes.fromhex(modulus.strip().split("=", 1)[1])
    jwks = {"keys": [{"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256", "n": b64url(n),
                      "e": "AQAB"}]}
    with open(os.path.join(d, "jwks.json"), "w") as f:
        json.dump(jwks, f)


def jwt(d, sub, key="jwt.key"):
    now = int(time.time())
    header = b64url(json.dumps({"alg": "RS256", "typ": "JWT", "kid": "k1"}).encode())
    claims = b64url(json.dumps({"sub": sub, "iat": now, "exp": now + 3600}).encode())
    signing_input = f"{header}.{claims}"
    sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", os.path.join(d, key)],
                         input=signing_input.encode(), capture_output=True, check=True).stdout
    return f"{signing_input}.{b64url(sig)}"


# ---- broker -------------------------------------------------------------------------------------
def start_broker(binary, d):
    ports = {name: free_port() for name in ("plain", "ssl", "mtls", "sasls")}
    at = {k: f"localhost:{p}" for k, p in ports.items()}
    listeners = (f"PLAINTEXT://{at['plain']},SSL://{at['ssl']},MTLS://{at['mtls']},"
                 f"SASLS://{at['sasls']}")
    overrides = [
        f"listeners={listeners}", f"advertised.listeners={listeners}",
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,SASLS:SASL_SSL",
        "ssl.keystore.type=PEM", f"ssl.keystore.location={d}/broker.pem",
        "ssl.truststore.type=PEM", f"ssl.truststore.location={d}/ca.pem",
        "listener.name.mtls.ssl.client.auth=required",
        "listener.name.mtls.ssl.principal.mapping.rules=RULE:^CN=([a-z]+),O=Spool$/$1/,DEFAULT",
        "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
        "listener.name.sasls.plain.sasl.jaas.config=org.apache.kafka.common.security.plain."
        f"PlainLoginModule required user_admin=\"{ADMIN[1]}\" "
        + " ".join(f'user_{u}="{password(u)}"' for u in ("plainuser", "plainnoacl")) + ";",
        f"listener.name.sasls.oauthbearer.sasl.server.callback.handler.class={VALIDATOR}",
        f"listener.name.sasls.sasl.oauthbearer.jwks.endpoint.url=file://{d}/jwks.json",
        f"authorizer.class.name={STANDARD}", "super.users=User:admin",
        "group.initial.rebalance.delay.ms=0", "auto.create.topics.enable=false",
    ]
    args = [BROKER_SH, "start", "--target", "spool", "--bin", binary, "--data-dir",
            os.path.join(d, "broker"), "--port", str(ports["plain"])]
    for o in overrides:
        args += ["--override", o]
    sh(args)
    return at


def stop_broker(d):
    proc = subprocess.run([BROKER_SH, "stop", "--target", "spool", "--data-dir",
                           os.path.join(d, "broker")], capture_output=True, text=True, timeout=120)
    return proc.returncode == 0


def admin_client(at, d):
    return AdminClient({"bootstrap.servers": at["sasls"], "security.protocol": "SASL_SSL",
                        "ssl.ca.location": f"{d}/ca.pem", "sasl.mechanisms": "PLAIN",
                        "sasl.username": ADMIN[0], "sasl.password": ADMIN[1],
                        "log_level": 3})


def wait_all(futures, what):
    for key, f in futures.items():
        try:
            f.result(timeout=60)
        except Exception as e:
            raise RuntimeError(f"{what} {key}: {e}") from e


def set_up_users_topics_acls(admin):
    """SCRAM users (AlterUserScramCredentials), one topic per client x user with ACLs, and Read on
    the sec- groups for everyone (the consumers' group ids)."""
    upserts = []
    for mechanism, users in ((ScramMechanism.SCRAM_SHA_256, ("scram256user", "scram256noacl")),
                             (ScramMechanism.SCRAM_SHA_512, ("scram512user", "scram512noacl"))):
        for u in users:
            upserts.append(UserScramCredentialUpsertion(
                u, ScramCredentialInfo(mechanism, SCRAM_ITERATIONS), password(u).encode()))
    wait_all(admin.alter_user_scram_credentials(upserts), "SCRAM user")
    topics = [NewTopic(topic_of(user, client), 1, 1)
              for _, _, user, _ in COLUMNS for client in CLIENTS]
    wait_all(admin.create_topics(topics), "topic")
    acls = [AclBinding(ResourceType.TOPIC, f"t-{user}-", ResourcePatternType.PREFIXED,
                       f"User:{user}", "*", AclOperation.ALL, AclPermissionType.ALLOW)
            for _, _, user, _ in COLUMNS]
    acls.append(AclBinding(ResourceType.GROUP, "sec-", ResourcePatternType.PREFIXED, "User:*", "*",
                           AclOperation.READ, AclPermissionType.ALLOW))
    wait_all(admin.create_acls(acls), "ACL")


def topic_of(user, client):
    return f"t-{user}-{client}"


# ---- cases ----------------------------------------------------------------------------------------
def cases_for(client, at, d):
    ca = f"{d}/ca.pem"
    out = []

    def case(column, cell, expect, user, **kw):
        out.append({"name": f"{client}-{column}-{cell}", "column": column, "cell": cell,
                    "expect": expect, "topic": topic_of(user, client), "count": RECORDS,
                    "ca": ca, **kw})

    for column, mechanism, user, noacl in COLUMNS:
        if column == "SSL":
            case(column, "ok", "ok", user, bootstrap=at["ssl"])
            case(column, "untrusted_ca", "handshake_failed", user, bootstrap=at["ssl"],
                 ca=f"{d}/rogue-ca.pem")
            continue
        if column == "mTLS":
            for cell, who, expect in (("ok", user, "ok"), ("no_acl", noacl, "topic_authz")):
                case(column, cell, expect, user, bootstrap=at["mtls"], cert=f"{d}/{who}.crt",
                     key=f"{d}/{who}.key")
            case(column, "no_cert", "handshake_failed", user, bootstrap=at["mtls"])
            continue

        def sasl(who, wrong=False):
            if mechanism == "OAUTHBEARER":
                return {"mechanism": mechanism, "principal": who,
                        "token": jwt(d, who, "stranger.key" if wrong else "jwt.key")}
            return {"mechanism": mechanism, "username": who,
                    "password": "wrong-secret" if wrong else password(who)}

        refused = "auth_failed"
        if client == "kafkajs" and mechanism == "OAUTHBEARER":
            # KafkaJS 2.2.4 ignores the server's challenge ({"status":"invalid_token"}, RFC 7628)
            # and takes it for success; its next request (Metadata) is one before authentication,
            # so the broker closes the connection, as Kafka does.
            refused = "connection_closed"
        for cell, who, wrong, expect in (("ok", user, False, "ok"),
                                         ("wrong_secret", user, True, refused),
                                         ("no_acl", noacl, False, "topic_authz")):
            case(column, cell, expect, user, bootstrap=at["sasls"], sasl=sasl(who, wrong))
    return out


def run_client(client, cases_file, args):
    if client == "kafkajs":
        cmd = ["node", os.path.join(HERE, "kafkajs_client.js"), "--cases", cases_file]
        env = {**os.environ, "NODE_PATH": os.path.join(args.kafkajs_dir, "node_modules")}
    elif client == "franz":
        cmd = [os.path.join(args.franz_dir, "franz-security"), "--cases", cases_file]
        env = None
    else:
        cmd = [sys.executable, os.path.join(HERE, "confluent_client.py"), "--cases", cases_file]
        env = None
    start = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=400, env=env)
    results = {}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[len("RESULT "):])
            results[r["name"]] = r
    return results, proc, time.time() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--kafkajs-dir", required=True)
    parser.add_argument("--franz-dir", required=True)
    parser.add_argument("--clients", default=",".join(CLIENTS))
    args = parser.parse_args()
    for tool in ("openssl", "node"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed (scripts/setup.sh --with-tests)")
    d = tempfile.mkdtemp(prefix="spool-sec-clients-")
    ok = False
    started = False
    try:
        t0 = time.time()
        make_pki(d)
        make_jwks(d)
        at = start_broker(args.bin, d)
        started = True
        set_up_users_topics_acls(admin_client(at, d))
        print(f"setup: PKI, broker, SCRAM users, topics, ACLs in {time.time() - t0:.1f}s",
              flush=True)
        clients = args.clients.split(",")
        all_cases = {}
        for client in clients:
            all_cases[client] = cases_for(client, at, d)
            with open(os.path.join(d, f"{client}-cases.json"), "w") as f:
                json.dump(all_cases[client], f)
        with ThreadPoolExecutor(len(clients)) as pool:
            runs = dict(zip(clients, pool.map(
                lambda c: run_client(c, os.path.join(d, f"{c}-cases.json"), args), clients)))
        passed = failed = 0
        for client in clients:
            results, proc, seconds = runs[client]
            print(f"---- {client}: {len(results)} cases in {seconds:.1f}s (exit {proc.returncode})")
            for case in all_cases[client]:
                r = results.get(case["name"])
                got = r["outcome"] if r else "no result"
                detail = (r or {}).get("detail", "")
                line = f"{case['name']} expect {case['expect']}, got {got} ({(r or {}).get('ms', '-')} ms)"
                if got == case["expect"]:
                    passed += 1
                    print(f"PASS {line}: {detail[:200]}")
                else:
                    failed += 1
                    print(f"FAIL {line}: {detail}")
            if proc.returncode != 0 or len(results) != len(all_cases[client]):
                print(f"{client} stderr:\n{proc.stderr[-4000:]}")
        print(f"wall time {time.time() - t0:.1f}s")
        print(f"{passed} passed, {failed} failed")
        ok = failed == 0
    finally:
        if started and not stop_broker(d):
            print("FAIL the broker did not stop cleanly on SIGTERM")
            ok = False
        if not ok:
            log = os.path.join(d, "broker", "spool.log")
            if os.path.exists(log):
                with open(log) as f:
                    print("---- last lines of spool.log ----\n" + "".join(f.readlines()[-40:]))
        if ok or os.environ.get("CI"):
            shutil.rmtree(d, ignore_errors=True)
        else:
            print(f"kept {d}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
