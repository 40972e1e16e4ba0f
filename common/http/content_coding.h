#pragma once

// gzip content coding for responses (RFC 9110 section 8.4, RFC 1952), for big bodies that
// compress well: a Prometheus scrape of a broker with 10,000 partitions is ~5 MB of text that
// gzip shrinks ~15x, and Prometheus always sends "Accept-Encoding: gzip".
//
//   accepts_gzip(req)                  the client's Accept-Encoding admits gzip
//   gzip(body)                         RFC 1952 stream of body (zlib, fastest level)
//   encode_if_accepted(req, res)       gzips res's body in place when accepted, and says so in
//                                      Content-Encoding; always adds Vary: Accept-Encoding
//
// Compression runs where the caller runs: the handlers of common/http/server.h run on the
// server's own thread, never on the embedding program's threads (the broker's shards).
// Threading: free functions, no state.

#include "common/http/message.h"
#include "common/result.h"

#include <string>
#include <string_view>

namespace spool::http {

// True when the request's Accept-Encoding lists gzip (or x-gzip, or "*") with a q-value above
// 0. No header, or one that refuses gzip ("gzip;q=0", "identity"), is false: the body goes as is.
bool accepts_gzip(const request& req);

// The gzip stream of `body` at zlib's fastest level: on metrics text level 1 compresses within
// ~10% of level 6 for a third of the CPU. Fails only when zlib does (out of memory).
result<std::string> gzip(std::string_view body);

// Replaces res's body by its gzip stream, with Content-Encoding: gzip, when req accepts gzip
// and the body is not empty; otherwise leaves it. If compression fails the body goes
// uncompressed, which every client reads. Vary: Accept-Encoding is set either way so a cache
// between scraper and server never hands one form to a client that asked for the other.
void encode_if_accepted(const request& req, response& res);

}  // namespace spool::http
