// kmsg-crosscheck writes random Kafka requests and responses encoded by franz-go's kmsg, an
// independent codec, so Spool's generated codecs can be checked to decode and re-encode them
// byte for byte (protocol/tests/crosscheck_test.cc).
//
// Usage: kmsg-crosscheck -out corpus.bin -apis key:min:max,... [-n 20] [-seed 1]
//
// Corpus format, one entry after another (big-endian):
//
//	u8 kind (0 request, 1 response) | i16 api key | i16 version | u32 length | length bytes (body)
//
// Values never include nulls: kmsg writes a nil pointer as null even in versions where Kafka
// does not allow one, which Spool rightly refuses; nulls are covered by Spool's own round trips.
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func main() {
	out := flag.String("out", "", "corpus file to write")
	apis := flag.String("apis", "", "comma-separated key:minVersion:maxVersion triples Spool supports")
	perVersion := flag.Int("n", 20, "messages per kind, key and version")
	seed := flag.Int64("seed", 1, "random seed")
	flag.Parse()
	if *out == "" || *apis == "" {
		flag.Usage()
		os.Exit(2)
	}
	rng := rand.New(rand.NewSource(*seed))
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := bufio.NewWriter(f)
	total := 0
	for _, pair := range strings.Split(*apis, ",") {
		parts := strings.Split(pair, ":")
		key, _ := strconv.Atoi(parts[0])
		spoolMin, _ := strconv.Atoi(parts[1])
		spoolMax, _ := strconv.Atoi(parts[2])
		req := kmsg.RequestForKey(int16(key))
		if req == nil {
			fmt.Fprintf(os.Stderr, "kmsg does not know key %d\n", key)
			os.Exit(1)
		}
		hi := int(req.MaxVersion())
		if spoolMax < hi {
			hi = spoolMax
		}
		// The versions both codecs support; print them so the test log shows the intersection.
		fmt.Printf("key %d: spool %d-%d kmsg 0-%d -> checking %d-%d\n", key, spoolMin, spoolMax,
			req.MaxVersion(), spoolMin, hi)
		for v := spoolMin; v <= hi; v++ {
			for i := 0; i < *perVersion; i++ {
				r := kmsg.RequestForKey(int16(key))
				fill(rng, reflect.ValueOf(r).Elem(), 0)
				r.SetVersion(int16(v))
				write(w, 0, key, v, r.AppendTo(nil))
				resp := kmsg.ResponseForKey(int16(key))
				fill(rng, reflect.ValueOf(resp).Elem(), 0)
				resp.SetVersion(int16(v))
				write(w, 1, key, v, resp.AppendTo(nil))
				total += 2
			}
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f.Close()
	fmt.Printf("wrote %d messages\n", total)
}

func write(w *bufio.Writer, kind byte, key, version int, body []byte) {
	var hdr [9]byte
	hdr[0] = kind
	binary.BigEndian.PutUint16(hdr[1:], uint16(key))
	binary.BigEndian.PutUint16(hdr[3:], uint16(version))
	binary.BigEndian.PutUint32(hdr[5:], uint32(len(body)))
	w.Write(hdr[:])
	w.Write(body)
}

func randInt(rng *rand.Rand) int64 {
	switch rng.Intn(5) {
	case 0:
		return 1 + rng.Int63n(100)
	case 1:
		return -2 - rng.Int63n(100)
	default:
		return rng.Int63()
	}
}

func randString(rng *rand.Rand) string {
	b := make([]byte, 1+rng.Intn(10))
	for i := range b {
		b[i] = byte('a' + rng.Intn(26))
	}
	return string(b)
}

// fill sets every exported field to a random non-null value. Integers avoid 0 and -1, the
// defaults of most tagged fields, which kmsg may write where Spool omits them.
func fill(rng *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			name := t.Field(i).Name
			if !t.Field(i).IsExported() || name == "Version" || name == "UnknownTags" {
				continue
			}
			fill(rng, v.Field(i), depth+1)
		}
	case reflect.Bool:
		v.SetBool(rng.Intn(2) == 1)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(randInt(rng))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(1 + rng.Intn(60000)))
	case reflect.Float64:
		v.SetFloat(float64(rng.Intn(100000)) / 8)
	case reflect.String:
		v.SetString(randString(rng))
	case reflect.Ptr:
		p := reflect.New(v.Type().Elem())
		fill(rng, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Array: // uuid
		for i := 0; i < v.Len(); i++ {
			v.Index(i).SetUint(uint64(rng.Intn(256)))
		}
	case reflect.Slice:
		n := 1 + rng.Intn(2)
		if depth > 6 {
			n = 0
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			fill(rng, s.Index(i), depth+1)
		}
		v.Set(s)
	}
}
