// Command franz-security runs tests/compat/security's cases with franz-go (kgo, sasl/plain,
// sasl/scram, sasl/oauth over crypto/tls): for each case of the cases file, produce N records
// (acks=all) and consume them back from the partition (kgo.ConsumePartitions, no group), or see
// the failure the case expects. Prints one line per case:
//
//	RESULT {"name", "outcome", "detail", "ms"}
//
// outcome: ok, auth_failed, topic_authz, handshake_failed or error.
//
//	franz-security --cases FILE
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

const timeout = 20 * time.Second

type saslSpec struct {
	Mechanism string `json:"mechanism"`
	Username  string `json:"username"`
	Password  string `json:"password"`
	Token     string `json:"token"`
}

type testCase struct {
	Name      string    `json:"name"`
	Bootstrap string    `json:"bootstrap"`
	CA        string    `json:"ca"`
	Cert      string    `json:"cert"`
	Key       string    `json:"key"`
	SASL      *saslSpec `json:"sasl"`
	Topic     string    `json:"topic"`
	Count     int       `json:"count"`
}

func options(c testCase) ([]kgo.Opt, error) {
	pem, err := os.ReadFile(c.CA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if c.Cert != "" {
		pair, err := tls.LoadX509KeyPair(c.Cert, c.Key)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Bootstrap),
		kgo.DialTLSConfig(cfg),
		kgo.RequestRetries(1),
		kgo.RetryTimeout(5 * time.Second),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{c.Topic: {0: kgo.NewOffset().AtStart()}}),
	}
	if s := c.SASL; s != nil {
		var m sasl.Mechanism
		switch s.Mechanism {
		case "PLAIN":
			m = plain.Auth{User: s.Username, Pass: s.Password}.AsMechanism()
		case "SCRAM-SHA-256":
			m = scram.Auth{User: s.Username, Pass: s.Password}.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			m = scram.Auth{User: s.Username, Pass: s.Password}.AsSha512Mechanism()
		case "OAUTHBEARER":
			m = oauth.Auth{Token: s.Token}.AsMechanism()
		default:
			return nil, fmt.Errorf("unknown mechanism %s", s.Mechanism)
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// classify names the failure franz-go returned.
func classify(err error) (string, string) {
	text := err.Error()
	var tlsAlert tls.AlertError
	var unknownCA x509.UnknownAuthorityError
	var certInvalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return "topic_authz", text
	case errors.Is(err, kerr.SaslAuthenticationFailed):
		return "auth_failed", text
	case errors.As(err, &tlsAlert), errors.As(err, &unknownCA), errors.As(err, &certInvalid),
		errors.As(err, &verify), strings.Contains(text, "tls: "):
		return "handshake_failed", text
	}
	return "error", text
}

func run(c testCase) (string, string) {
	opts, err := options(c)
	if err != nil {
		return "error", err.Error()
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return "error", err.Error()
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// A metadata request for the topic first: it surfaces the handshake and SASL errors of the
	// connection itself (a produce would retry them until its timeout). A topic error is left to
	// the produce, which must fail with it.
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(c.Topic)
	req.Topics = append(req.Topics, t)
	if _, err := req.RequestWith(ctx, cl); err != nil {
		return classify(err)
	}
	records := make([]*kgo.Record, c.Count)
	for i := range records {
		records[i] = &kgo.Record{Topic: c.Topic, Partition: 0, Key: []byte(fmt.Sprint(i)),
			Value: []byte(fmt.Sprintf("%s-%d", c.Name, i))}
	}
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		return classify(err)
	}
	got := 0
	for got < c.Count {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return "error", fmt.Sprintf("consumed %d of %d records back: %v", got, c.Count, err)
		}
		for _, fe := range fetches.Errors() {
			return classify(fe.Err)
		}
		var bad error
		fetches.EachRecord(func(r *kgo.Record) {
			want := fmt.Sprintf("%s-%d", c.Name, got)
			if bad == nil && (string(r.Value) != want || string(r.Key) != fmt.Sprint(got) || r.Offset != int64(got)) {
				bad = fmt.Errorf("record %d: key %q value %q offset %d, want value %q", got, r.Key, r.Value, r.Offset, want)
			}
			got++
		})
		if bad != nil {
			return "error", bad.Error()
		}
	}
	if got != c.Count {
		return "error", fmt.Sprintf("consumed %d records, produced %d", got, c.Count)
	}
	return "ok", fmt.Sprintf("%d produced and consumed back", c.Count)
}

func main() {
	path := flag.String("cases", "", "the cases file (JSON) security_clients.py writes")
	flag.Parse()
	data, err := os.ReadFile(*path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var cases []testCase
	if err := json.Unmarshal(data, &cases); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, c := range cases {
		start := time.Now()
		outcome, detail := run(c)
		line, _ := json.Marshal(map[string]any{"name": c.Name, "outcome": outcome, "detail": detail,
			"ms": time.Since(start).Milliseconds()})
		fmt.Printf("RESULT %s\n", line)
	}
}
