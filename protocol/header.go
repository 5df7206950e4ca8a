package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Errors returned by the header parser. They close the connection.
var (
	ErrTruncatedHeader = errors.New("protocol: truncated request header")
	ErrUnknownAPIKey   = errors.New("protocol: unknown api key")
	ErrUnknownVersion  = errors.New("protocol: api version newer than this server can decode")
	ErrBadBody         = errors.New("protocol: undecodable request body")
)

const (
	apiVersionsKey        = 18
	controlledShutdownKey = 7
)

// header is a parsed request header.
type header struct {
	key, version  int16
	correlationID int32
	clientID      *string
}

// requestHeaderVersion returns 0, 1 or 2 for a request of this kind at the
// given version (req may be nil for an unknown key).
func requestHeaderVersion(key, version int16, req kmsg.Request) int {
	if key == controlledShutdownKey && version == 0 {
		return 0
	}
	if key == apiVersionsKey {
		// Kafka derives the header version from the ApiVersions version
		// even when it is newer than anything it knows, so a client
		// probing with v5 still sends a flexible header.
		if version >= 3 {
			return 2
		}
		return 1
	}
	if req != nil {
		req.SetVersion(version)
		if req.IsFlexible() {
			return 2
		}
	}
	return 1
}

// parseRequest parses the header and decodes the body of one frame. For
// errors other than a truncated header, the returned header is valid (so the
// caller can log the key and correlation id).
func parseRequest(frame []byte) (header, kmsg.Request, error) {
	var h header
	if len(frame) < 8 {
		return h, nil, ErrTruncatedHeader
	}
	h.key = int16(binary.BigEndian.Uint16(frame[0:]))
	h.version = int16(binary.BigEndian.Uint16(frame[2:]))
	h.correlationID = int32(binary.BigEndian.Uint32(frame[4:]))
	b := frame[8:]

	req := kmsg.RequestForKey(h.key)
	if req == nil {
		return h, nil, fmt.Errorf("%w %d", ErrUnknownAPIKey, h.key)
	}
	if h.key != apiVersionsKey && (h.version < 0 || h.version > req.MaxVersion()) {
		return h, nil, fmt.Errorf("%w: key %d version %d", ErrUnknownVersion, h.key, h.version)
	}
	hv := requestHeaderVersion(h.key, h.version, req)
	if hv >= 1 {
		if len(b) < 2 {
			return h, nil, ErrTruncatedHeader
		}
		n := int16(binary.BigEndian.Uint16(b))
		b = b[2:]
		if n >= 0 {
			if len(b) < int(n) {
				return h, nil, ErrTruncatedHeader
			}
			s := string(b[:n])
			h.clientID = &s
			b = b[n:]
		} else if n != -1 {
			return h, nil, ErrTruncatedHeader
		}
	}
	if hv >= 2 {
		var ok bool
		if b, ok = skipTags(b); !ok {
			return h, nil, ErrTruncatedHeader
		}
	}

	if h.key == apiVersionsKey {
		// An ApiVersions we cannot decode still gets an answer: the
		// handler sees an empty request with the client's version and
		// replies UNSUPPORTED_VERSION with its ranges (KIP-511).
		av := &kmsg.ApiVersionsRequest{Version: h.version}
		if h.version >= 0 && h.version <= av.MaxVersion() {
			dec := kmsg.NewPtrApiVersionsRequest()
			dec.SetVersion(h.version)
			if dec.ReadFrom(b) == nil {
				return h, dec, nil
			}
		}
		return h, av, nil
	}

	req.SetVersion(h.version)
	if err := req.ReadFrom(b); err != nil {
		return h, nil, fmt.Errorf("%w: key %d version %d: %v", ErrBadBody, h.key, h.version, err)
	}
	return h, req, nil
}

// skipTags skips a tagged-field section: uvarint count, then per field a
// uvarint tag, a uvarint size and size bytes. Header tags carry nothing we
// use, so their contents are ignored.
func skipTags(b []byte) ([]byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, false
	}
	b = b[k:]
	for range n {
		_, k := binary.Uvarint(b) // tag
		if k <= 0 {
			return nil, false
		}
		b = b[k:]
		size, k := binary.Uvarint(b)
		if k <= 0 || size > uint64(len(b)-k) {
			return nil, false
		}
		b = b[k+int(size):]
	}
	return b, true
}

// appendResponseHeader appends a response frame's length placeholder and
// header; the caller patches the length once the body is appended.
func appendResponseHeader(dst []byte, key int16, correlationID int32, flexible bool) []byte {
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlationID))
	// ApiVersions always answers with header v0 (see package doc).
	if flexible && key != apiVersionsKey {
		dst = append(dst, 0) // no tagged fields
	}
	return dst
}
