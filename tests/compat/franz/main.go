// Command franz-compat checks Spool against franz-go (kgo + kadm): admin topic lifecycle and
// configs, an idempotent producer per compression codec (none, gzip, snappy, lz4, zstd), and
// reading everything back from assigned partitions (kgo.ConsumePartitions, no group).
//
//	franz-compat --bootstrap HOST:PORT
//
// Prints PASS/FAIL/SKIP per check and a summary; exits 1 unless every check passed. franz-go
// speaks the newest version of each API the broker advertises, so this is also the suite's check
// of the broker's highest advertised versions.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	partitions = 3
	messages   = 200
	timeout    = 30 * time.Second
)

var codecs = []struct {
	name  string
	codec kgo.CompressionCodec
}{
	{"none", kgo.NoCompression()},
	{"gzip", kgo.GzipCompression()},
	{"snappy", kgo.SnappyCompression()},
	{"lz4", kgo.Lz4Compression()},
	{"zstd", kgo.ZstdCompression()},
}

// runner reports checks; a check whose dependency did not pass is skipped, and so is everything
// after a failure that left the broker unreachable (a crash), instead of each waiting for its
// timeout.
type runner struct {
	bootstrap       string
	passed          int
	failed, skipped []string
	brokerDown      bool
}

func (r *runner) check(name string, deps []string, body func() error) {
	if r.brokerDown {
		r.skipped = append(r.skipped, name)
		fmt.Printf("SKIP %s (broker unreachable)\n", name)
		return
	}
	for _, d := range deps {
		if slices.Contains(r.failed, d) || slices.Contains(r.skipped, d) {
			r.skipped = append(r.skipped, name)
			fmt.Printf("SKIP %s (needs %s)\n", name, d)
			return
		}
	}
	start := time.Now()
	if err := body(); err != nil {
		r.failed = append(r.failed, name)
		fmt.Printf("FAIL %s (%d ms): %v\n", name, time.Since(start).Milliseconds(), err)
		if conn, err := net.DialTimeout("tcp", r.bootstrap, 2*time.Second); err != nil {
			r.brokerDown = true
			fmt.Printf("broker at %s no longer accepts connections: skipping the rest\n", r.bootstrap)
		} else {
			conn.Close()
		}
		return
	}
	r.passed++
	fmt.Printf("PASS %s (%d ms)\n", name, time.Since(start).Milliseconds())
}

// message is one produced record and where the broker acknowledged it.
type message struct {
	seq          int
	key          string
	value        *string // nil = tombstone
	partition    int32
	offset       int64
	acknowledged bool
}

func workload(label string) []*message {
	ms := make([]*message, messages)
	for i := range ms {
		m := &message{seq: i, key: fmt.Sprintf("key-%d", i%7)}
		if i%50 != 49 {
			v := fmt.Sprintf("%s-%d-%s", label, i, strings.Repeat("v", (i%5)*150))
			m.value = &v
		}
		ms[i] = m
	}
	return ms
}

// verifyAcks: offsets dense from 0 in send order per partition; a key never spans partitions.
func verifyAcks(label string, ms []*message) error {
	keyPartition := map[string]int32{}
	next := map[int32]int64{}
	for _, m := range ms {
		if !m.acknowledged {
			return fmt.Errorf("%s: message %d not acknowledged", label, m.seq)
		}
		if p, ok := keyPartition[m.key]; ok && p != m.partition {
			return fmt.Errorf("%s: key %s in partitions %d and %d", label, m.key, p, m.partition)
		}
		keyPartition[m.key] = m.partition
		if m.offset != next[m.partition] {
			return fmt.Errorf("%s: message %d at %d-%d, expected offset %d (dense, in send order)",
				label, m.seq, m.partition, m.offset, next[m.partition])
		}
		next[m.partition]++
	}
	return nil
}

func byPartition(ms []*message) map[int32][]*message {
	out := map[int32][]*message{}
	for _, m := range ms {
		out[m.partition] = append(out[m.partition], m)
	}
	return out
}

type suite struct {
	bootstrap string
	prefix    string
	adm       *kadm.Client
	r         runner
	loads     map[string][]*message
}

func (s *suite) topic(suffix string) string { return s.prefix + "-" + suffix }

func ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), timeout)
}

func (s *suite) produce(topic string, codec kgo.CompressionCodec, ms []*message) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.bootstrap), kgo.MetadataMinAge(250*time.Millisecond), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(codec), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(5*time.Millisecond), kgo.RecordDeliveryTimeout(timeout))
	if err != nil {
		return err
	}
	defer cl.Close()
	c, cancel := ctx()
	defer cancel()
	// Idempotence is franz-go's default; prove the broker granted a producer id.
	if id, _, err := cl.ProducerID(c); err != nil || id < 0 {
		return fmt.Errorf("no idempotent producer id (id %d): %v", id, err)
	}
	// Four bursts, so that sequence numbers advance across requests.
	for start := 0; start < len(ms); start += 50 {
		var recs []*kgo.Record
		sent := map[*kgo.Record]*message{}
		for _, m := range ms[start : start+50] {
			rec := &kgo.Record{Key: []byte(m.key),
				Headers: []kgo.RecordHeader{{Key: "seq", Value: []byte(strconv.Itoa(m.seq))}}}
			if m.value != nil {
				rec.Value = []byte(*m.value)
			}
			recs = append(recs, rec)
			sent[rec] = m
		}
		// Results arrive in completion order, not send order: map them back by record.
		results := cl.ProduceSync(c, recs...)
		if err := results.FirstErr(); err != nil {
			return err
		}
		for _, res := range results {
			m := sent[res.Record]
			m.partition, m.offset, m.acknowledged = res.Record.Partition, res.Record.Offset, true
		}
	}
	return nil
}

// consume reads [from, end offset) of every partition with data, without a group.
func (s *suite) consume(topic string, ms []*message, isolation kgo.IsolationLevel,
	from int64) (map[int32][]*kgo.Record, error) {
	want := map[int32]int64{}
	offsets := map[int32]kgo.Offset{}
	var total int64
	for p, list := range byPartition(ms) {
		want[p] = int64(len(list))
		offsets[p] = kgo.NewOffset().At(from)
		total += int64(len(list)) - from
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.bootstrap), kgo.MetadataMinAge(250*time.Millisecond), kgo.FetchIsolationLevel(isolation),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	got := map[int32][]*kgo.Record{}
	var n int64
	deadline := time.Now().Add(timeout)
	for n < total && time.Now().Before(deadline) {
		c, cancel := context.WithTimeout(context.Background(), time.Second)
		fetches := cl.PollFetches(c)
		cancel()
		var fetchErr error
		fetches.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				fetchErr = fmt.Errorf("fetch %s-%d: %w", t, p, err)
			}
		})
		if fetchErr != nil {
			return nil, fetchErr
		}
		fetches.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], r)
			n++
		})
	}
	if n != total {
		return nil, fmt.Errorf("consumed %d of %d records within %v", n, total, timeout)
	}
	return got, nil
}

func verifyConsumed(label string, ms []*message, got map[int32][]*kgo.Record, from int64) error {
	for p, want := range byPartition(ms) {
		have := got[p]
		if int64(len(have)) != int64(len(want))-from {
			return fmt.Errorf("%s: partition %d: %d records, want %d", label, p, len(have),
				int64(len(want))-from)
		}
		for i, r := range have {
			w := want[int64(i)+from]
			where := fmt.Sprintf("%s %d-%d", label, p, r.Offset)
			if r.Offset != w.offset {
				return fmt.Errorf("%s: offset, want %d", where, w.offset)
			}
			if string(r.Key) != w.key {
				return fmt.Errorf("%s: key %q, want %q", where, r.Key, w.key)
			}
			if (w.value == nil) != (r.Value == nil) || (w.value != nil && string(r.Value) != *w.value) {
				return fmt.Errorf("%s: value %q differs", where, r.Value)
			}
			if len(r.Headers) != 1 || r.Headers[0].Key != "seq" ||
				string(r.Headers[0].Value) != strconv.Itoa(w.seq) {
				return fmt.Errorf("%s: headers %v, want seq=%d", where, r.Headers, w.seq)
			}
		}
	}
	return nil
}

// waitForTopic polls metadata until the topic shows n partitions, each with a leader: CreateTopics
// may answer before the broker's metadata has caught up, and a producer that partitions by key over
// a changing partition count would scatter a key.
func (s *suite) waitForTopic(topic string, n int) error {
	c, cancel := ctx()
	defer cancel()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		details, err := s.adm.ListTopics(c, topic)
		if err == nil {
			d := details[topic]
			ready := d.Err == nil && len(d.Partitions) == n
			for _, p := range d.Partitions {
				ready = ready && p.Err == nil && p.Leader >= 0
			}
			if ready {
				return nil
			}
			err = fmt.Errorf("topic %s not ready: err %v, %d partitions", topic, d.Err, len(d.Partitions))
		}
		if time.Now().After(deadline) {
			return err
		}
	}
}

// eventually retries fn for a few seconds: config changes reach the broker's view asynchronously
// in Kafka (KRaft applies them from the metadata log), so a read right after a write may be stale.
func eventually(fn func() error) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := fn()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *suite) topicConfig(topic string) (map[string]kadm.Config, error) {
	c, cancel := ctx()
	defer cancel()
	rcs, err := s.adm.DescribeTopicConfigs(c, topic)
	if err != nil {
		return nil, err
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		return nil, err
	}
	if rc.Err != nil {
		return nil, rc.Err
	}
	out := map[string]kadm.Config{}
	for _, cfg := range rc.Configs {
		out[cfg.Key] = cfg
	}
	return out, nil
}

func expectConfig(cfgs map[string]kadm.Config, key, value string, dynamic bool) error {
	cfg, ok := cfgs[key]
	if !ok || cfg.Value == nil {
		return fmt.Errorf("config %s missing", key)
	}
	if *cfg.Value != value {
		return fmt.Errorf("config %s = %q, want %q", key, *cfg.Value, value)
	}
	if isDynamic := cfg.Source == kmsg.ConfigSourceDynamicTopicConfig; isDynamic != dynamic {
		return fmt.Errorf("config %s source %v, want dynamic topic config: %v", key, cfg.Source, dynamic)
	}
	return nil
}

func (s *suite) adminChecks() {
	t := s.topic("admin")
	r := &s.r
	r.check("admin_metadata", nil, func() error {
		c, cancel := ctx()
		defer cancel()
		md, err := s.adm.BrokerMetadata(c)
		if err != nil {
			return err
		}
		if len(md.Brokers) != 1 || md.Cluster == "" {
			return fmt.Errorf("brokers %v, cluster id %q", md.Brokers, md.Cluster)
		}
		return nil
	})
	r.check("admin_create_topic", nil, func() error {
		c, cancel := ctx()
		defer cancel()
		retention := "86400000"
		resp, err := s.adm.CreateTopic(c, partitions, 1, map[string]*string{"retention.ms": &retention}, t)
		if err != nil {
			return err
		}
		if resp.NumPartitions != partitions || resp.ReplicationFactor != 1 {
			return fmt.Errorf("created %d partitions, rf %d", resp.NumPartitions, resp.ReplicationFactor)
		}
		if resp.ID == (kadm.TopicID{}) {
			return errors.New("CreateTopics returned no topic id")
		}
		_, err = s.adm.CreateTopic(c, 1, 1, nil, t)
		if !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("creating the topic twice: %v, want TOPIC_ALREADY_EXISTS", err)
		}
		return nil
	})
	r.check("admin_describe_topic", []string{"admin_create_topic"}, func() error {
		if err := s.waitForTopic(t, partitions); err != nil {
			return err
		}
		c, cancel := ctx()
		defer cancel()
		details, err := s.adm.ListTopics(c, t)
		if err != nil {
			return err
		}
		d := details[t]
		if d.Err != nil || len(d.Partitions) != partitions {
			return fmt.Errorf("topic %s: err %v, %d partitions", t, d.Err, len(d.Partitions))
		}
		for _, p := range d.Partitions {
			if p.Err != nil || p.Leader < 0 || len(p.Replicas) != 1 || len(p.ISR) != 1 {
				return fmt.Errorf("partition %d: %+v", p.Partition, p)
			}
		}
		return nil
	})
	r.check("admin_describe_configs", []string{"admin_create_topic"}, func() error {
		cfgs, err := s.topicConfig(t)
		if err != nil {
			return err
		}
		if err := expectConfig(cfgs, "retention.ms", "86400000", true); err != nil {
			return err
		}
		return expectConfig(cfgs, "cleanup.policy", "delete", false)
	})
	r.check("admin_alter_configs", []string{"admin_describe_configs"}, func() error {
		c, cancel := ctx()
		defer cancel()
		compact, retention := "compact", "172800000"
		resp, err := s.adm.AlterTopicConfigs(c, []kadm.AlterConfig{
			{Op: kadm.SetConfig, Name: "cleanup.policy", Value: &compact},
			{Op: kadm.SetConfig, Name: "retention.ms", Value: &retention},
		}, t)
		if err == nil {
			_, err = resp.On(t, nil)
		}
		if err != nil {
			return err
		}
		if err := eventually(func() error {
			cfgs, err := s.topicConfig(t)
			if err != nil {
				return err
			}
			if err := expectConfig(cfgs, "cleanup.policy", "compact", true); err != nil {
				return err
			}
			return expectConfig(cfgs, "retention.ms", "172800000", true)
		}); err != nil {
			return err
		}
		if resp, err = s.adm.AlterTopicConfigs(c, []kadm.AlterConfig{
			{Op: kadm.DeleteConfig, Name: "cleanup.policy"}}, t); err == nil {
			_, err = resp.On(t, nil)
		}
		if err != nil {
			return err
		}
		return eventually(func() error {
			cfgs, err := s.topicConfig(t)
			if err != nil {
				return err
			}
			return expectConfig(cfgs, "cleanup.policy", "delete", false)
		})
	})
	r.check("admin_broker_configs", []string{"admin_metadata"}, func() error {
		c, cancel := ctx()
		defer cancel()
		md, err := s.adm.BrokerMetadata(c)
		if err != nil {
			return err
		}
		rcs, err := s.adm.DescribeBrokerConfigs(c, md.Brokers.NodeIDs()...)
		if err != nil {
			return err
		}
		for _, rc := range rcs {
			for _, cfg := range rc.Configs {
				if cfg.Key == "num.partitions" && cfg.Value != nil {
					return nil
				}
			}
		}
		return errors.New("broker configs lack num.partitions")
	})
	r.check("admin_create_partitions", []string{"admin_describe_topic"}, func() error {
		c, cancel := ctx()
		defer cancel()
		resp, err := s.adm.UpdatePartitions(c, partitions+1, t)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			return err
		}
		return s.waitForTopic(t, partitions+1)
	})
}

func (s *suite) codecChecks(name string, codec kgo.CompressionCodec) {
	t := s.topic(name)
	label := "franz-" + name
	ms := workload(label)
	s.loads[name] = ms
	s.r.check("produce_"+name, []string{"admin_create_topic"}, func() error {
		c, cancel := ctx()
		defer cancel()
		if _, err := s.adm.CreateTopic(c, partitions, 1, nil, t); err != nil {
			return err
		}
		if err := s.waitForTopic(t, partitions); err != nil {
			return err
		}
		if err := s.produce(t, codec, ms); err != nil {
			return err
		}
		return verifyAcks(label, ms)
	})
	s.r.check("consume_"+name, []string{"produce_" + name}, func() error {
		got, err := s.consume(t, ms, kgo.ReadUncommitted(), 0)
		if err != nil {
			return err
		}
		return verifyConsumed(label, ms, got, 0)
	})
	s.r.check("offsets_"+name, []string{"produce_" + name}, func() error {
		c, cancel := ctx()
		defer cancel()
		ends, err := s.adm.ListEndOffsets(c, t)
		if err != nil {
			return err
		}
		starts, err := s.adm.ListStartOffsets(c, t)
		if err != nil {
			return err
		}
		want := byPartition(ms)
		for p := int32(0); p < partitions; p++ {
			end, ok := ends.Lookup(t, p)
			start, ok2 := starts.Lookup(t, p)
			if !ok || !ok2 || end.Err != nil || start.Err != nil {
				return fmt.Errorf("partition %d: no offsets (%v, %v)", p, end.Err, start.Err)
			}
			if end.Offset != int64(len(want[p])) || start.Offset != 0 {
				return fmt.Errorf("partition %d: offsets [%d, %d), want [0, %d)", p, start.Offset,
					end.Offset, len(want[p]))
			}
		}
		return nil
	})
}

func main() {
	bootstrap := flag.String("bootstrap", "", "broker HOST:PORT")
	flag.Parse()
	if *bootstrap == "" {
		fmt.Fprintln(os.Stderr, "usage: franz-compat --bootstrap HOST:PORT")
		os.Exit(2)
	}
	s := &suite{bootstrap: *bootstrap, loads: map[string][]*message{}, r: runner{bootstrap: *bootstrap},
		prefix: "compat-franz-" + strconv.FormatInt(time.Now().UnixMilli(), 36)}
	cl, err := kgo.NewClient(kgo.SeedBrokers(*bootstrap), kgo.MetadataMinAge(250*time.Millisecond))
	if err != nil {
		fmt.Println("FAIL client:", err)
		os.Exit(1)
	}
	s.adm = kadm.NewClient(cl)
	defer s.adm.Close()

	s.adminChecks()
	for _, c := range codecs {
		s.codecChecks(c.name, c.codec)
	}
	s.r.check("consume_read_committed", []string{"produce_zstd"}, func() error {
		ms := s.loads["zstd"]
		got, err := s.consume(s.topic("zstd"), ms, kgo.ReadCommitted(), 0)
		if err != nil {
			return err
		}
		return verifyConsumed("franz-zstd-read-committed", ms, got, 0)
	})
	s.r.check("delete_records", []string{"consume_none"}, func() error {
		t, ms := s.topic("none"), s.loads["none"]
		var p int32
		for p = 0; len(byPartition(ms)[p]) < 3; p++ {
		}
		c, cancel := ctx()
		defer cancel()
		var os kadm.Offsets
		os.Add(kadm.Offset{Topic: t, Partition: p, At: 2, LeaderEpoch: -1})
		resp, err := s.adm.DeleteRecords(c, os)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			return err
		}
		if d, _ := resp.Lookup(t, p); d.LowWatermark != 2 {
			return fmt.Errorf("low watermark %d after DeleteRecords, want 2", d.LowWatermark)
		}
		starts, err := s.adm.ListStartOffsets(c, t)
		if err != nil {
			return err
		}
		if o, _ := starts.Lookup(t, p); o.Offset != 2 {
			return fmt.Errorf("start offset %d after DeleteRecords, want 2", o.Offset)
		}
		only := []*message{}
		for _, m := range ms {
			if m.partition == p {
				only = append(only, m)
			}
		}
		got, err := s.consume(t, only, kgo.ReadUncommitted(), 2)
		if err != nil {
			return err
		}
		return verifyConsumed("franz-none-after-delete", only, got, 2)
	})
	s.r.check("admin_delete_topics", []string{"admin_create_topic"}, func() error {
		c, cancel := ctx()
		defer cancel()
		topics := []string{s.topic("admin")}
		for _, cd := range codecs {
			topics = append(topics, s.topic(cd.name))
		}
		existing, err := s.adm.ListTopics(c)
		if err != nil {
			return err
		}
		topics = slices.DeleteFunc(topics, func(t string) bool { return !existing.Has(t) })
		resp, err := s.adm.DeleteTopics(c, topics...)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			return err
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			now, err := s.adm.ListTopics(c)
			if err != nil {
				return err
			}
			left := slices.DeleteFunc(slices.Clone(topics), func(t string) bool { return !now.Has(t) })
			if len(left) == 0 {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("still listed after DeleteTopics: %v", left)
			}
		}
	})

	fmt.Printf("franz-go: %d passed, %d failed, %d skipped\n", s.r.passed, len(s.r.failed), len(s.r.skipped))
	if len(s.r.failed)+len(s.r.skipped) > 0 {
		fmt.Println("failed:", strings.Join(s.r.failed, ", "))
		s.adm.Close()
		os.Exit(1)
	}
}
