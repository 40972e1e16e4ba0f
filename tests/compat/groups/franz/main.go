// Classic consumer groups with franz-go (kgo, cooperative-sticky balancer by default): three
// members of one group split a 6-partition topic and consume every message exactly once; one
// leaves and the other two take over; a new member resumes from the committed offsets.
//
//	go run . --bootstrap HOST:PORT [--protocol consumer]
//
// --protocol consumer runs the same checks with KIP-848 groups (kgo.ServerSideBalancer: the
// broker assigns the partitions).
// Prints PASS/FAIL per check and a summary; exits 1 unless every check passed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The group protocol the members use ("classic" or "consumer").
var groupProtocol = "classic"

const (
	partitions   = 6
	perPartition = 50
)

type seen struct {
	mu   sync.Mutex
	msgs []string
}

func (s *seen) add(v string) { s.mu.Lock(); s.msgs = append(s.msgs, v); s.mu.Unlock() }
func (s *seen) since(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.msgs[n:]...)
}
func (s *seen) len() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.msgs) }

type member struct {
	cl       *kgo.Client
	mu       sync.Mutex
	assigned map[int32]bool
	done     chan struct{}
}

func newMember(bootstrap, group, topic string, out *seen) *member {
	m := &member{assigned: map[int32]bool{}, done: make(chan struct{})}
	var opts []kgo.Opt
	if groupProtocol == "consumer" {
		opts = append(opts, kgo.ServerSideBalancer())
	}
	if os.Getenv("FRANZ_NO_FETCH_SESSIONS") != "" {
		// Diagnosis only: tells a group problem from an incremental fetch session problem.
		opts = append(opts, kgo.DisableFetchSessions())
	}
	if os.Getenv("FRANZ_DEBUG") != "" {
		opts = append(opts, kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelInfo, nil)))
	}
	cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(bootstrap), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.SessionTimeout(10*time.Second),
		kgo.HeartbeatInterval(500*time.Millisecond), kgo.AutoCommitInterval(200*time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
			m.mu.Lock()
			for _, p := range a[topic] {
				m.assigned[p] = true
			}
			m.mu.Unlock()
		}),
		kgo.OnPartitionsRevoked(func(ctx context.Context, c *kgo.Client, r map[string][]int32) {
			_ = c.CommitMarkedOffsets(ctx)
			m.mu.Lock()
			for _, p := range r[topic] {
				delete(m.assigned, p)
			}
			m.mu.Unlock()
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, r map[string][]int32) {
			m.mu.Lock()
			for _, p := range r[topic] {
				delete(m.assigned, p)
			}
			m.mu.Unlock()
		}))...)
	if err != nil {
		panic(err)
	}
	m.cl = cl
	go func() {
		defer close(m.done)
		for {
			fs := cl.PollFetches(context.Background())
			if fs.IsClientClosed() {
				return
			}
			fs.EachRecord(func(r *kgo.Record) { out.add(string(r.Value)) })
		}
	}()
	return m
}

func (m *member) owned() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int32
	for p := range m.assigned {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (m *member) close() {
	_ = m.cl.CommitUncommittedOffsets(context.Background())
	m.cl.Close() // leaves the group
	<-m.done
}

func split(ms []*member, each int) bool {
	all := map[int32]bool{}
	for _, m := range ms {
		o := m.owned()
		if len(o) != each {
			return false
		}
		for _, p := range o {
			all[p] = true
		}
	}
	return len(all) == partitions
}

func waitFor(cond func() bool, what string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("timed out waiting for %s", what)
}

func produce(bootstrap, topic string, from, count int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	var rs []*kgo.Record
	for p := 0; p < partitions; p++ {
		for n := from; n < from+count; n++ {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte(fmt.Sprintf("%d:%d", p, n))})
		}
	}
	return cl.ProduceSync(context.Background(), rs...).FirstErr()
}

func exactlyOnce(msgs []string, from, count int) error {
	counts := map[string]int{}
	for _, v := range msgs {
		counts[v]++
	}
	for v, c := range counts {
		if c > 1 {
			return fmt.Errorf("%s consumed %d times", v, c)
		}
	}
	for p := 0; p < partitions; p++ {
		for n := from; n < from+count; n++ {
			if counts[fmt.Sprintf("%d:%d", p, n)] == 0 {
				return fmt.Errorf("%d:%d never consumed", p, n)
			}
		}
	}
	return nil
}

func main() {
	bootstrap := flag.String("bootstrap", "", "host:port")
	flag.StringVar(&groupProtocol, "protocol", "classic", "classic or consumer (KIP-848)")
	flag.Parse()
	stamp := fmt.Sprintf("%s-%x", groupProtocol, time.Now().UnixMilli())
	topic, group := "franz-groups-"+stamp, "franz-group-"+stamp
	passed, failed := 0, 0
	check := func(name string, fn func() error) bool {
		if err := fn(); err != nil {
			fmt.Printf("FAIL %s: %v\n", name, err)
			failed++
			return false
		}
		fmt.Printf("PASS %s\n", name)
		passed++
		return true
	}
	admCl, err := kgo.NewClient(kgo.SeedBrokers(*bootstrap))
	if err != nil {
		panic(err)
	}
	adm := kadm.NewClient(admCl)
	defer adm.Close()
	if _, err := adm.CreateTopic(context.Background(), partitions, 1, nil, topic); err != nil {
		fmt.Printf("FAIL create_topic: %v\n", err)
		os.Exit(1)
	}
	out := &seen{}
	ms := []*member{newMember(*bootstrap, group, topic, out), newMember(*bootstrap, group, topic, out),
		newMember(*bootstrap, group, topic, out)}
	ok := check("group_shares_partitions", func() error {
		if err := waitFor(func() bool { return split(ms, 2) }, "a 3-way split"); err != nil {
			return err
		}
		if err := produce(*bootstrap, topic, 0, perPartition); err != nil {
			return err
		}
		if err := waitFor(func() bool { return out.len() >= partitions*perPartition }, "every message"); err != nil {
			return err
		}
		time.Sleep(time.Second)
		return exactlyOnce(out.since(0), 0, perPartition)
	})
	ok = ok && check("member_leave_rebalances", func() error {
		ms[2].close()
		ms = ms[:2]
		if err := waitFor(func() bool { return split(ms, 3) }, "a 2-way split"); err != nil {
			return err
		}
		before := out.len()
		if err := produce(*bootstrap, topic, perPartition, 10); err != nil {
			return err
		}
		if err := waitFor(func() bool { return out.len()-before >= partitions*10 }, "messages after leave"); err != nil {
			return fmt.Errorf("%v: got %d of %d, owned %v and %v", err, out.len()-before, partitions*10,
				ms[0].owned(), ms[1].owned())
		}
		time.Sleep(time.Second)
		return exactlyOnce(out.since(before), perPartition, 10)
	})
	for _, m := range ms {
		m.close()
	}
	ok = ok && check("resume_from_committed", func() error {
		if err := produce(*bootstrap, topic, perPartition+10, 5); err != nil {
			return err
		}
		fresh := &seen{}
		m := newMember(*bootstrap, group, topic, fresh)
		defer m.close()
		if err := waitFor(func() bool { return fresh.len() >= partitions*5 }, "messages after resume"); err != nil {
			return err
		}
		time.Sleep(1500 * time.Millisecond)
		if n := fresh.len(); n != partitions*5 {
			return fmt.Errorf("%d messages instead of %d: committed offsets not used", n, partitions*5)
		}
		return exactlyOnce(fresh.since(0), perPartition+10, 5)
	})
	_ = ok
	fmt.Printf("franz-groups: %d passed, %d failed\n", passed, failed)
	if failed > 0 || passed != 3 {
		os.Exit(1)
	}
}
