module spool/tools/kmsg-crosscheck

go 1.21

require github.com/twmb/franz-go/pkg/kmsg v1.15.1
