package telemetry

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Kind is what a Point measures.
type Kind uint8

const (
	// Gauge is a value at a point in time.
	Gauge Kind = iota + 1
	// Sum is a running total; Delta says whether Value is an increment
	// since the previous push or the total since StartNanos.
	Sum
)

func (k Kind) String() string {
	switch k {
	case Gauge:
		return "gauge"
	case Sum:
		return "sum"
	}
	return "unknown"
}

// Attr is one attribute of a point (or of the resource that sent it),
// its value rendered as text.
type Attr struct{ Key, Value string }

// Point is one data point of a pushed metric. A histogram or summary
// point becomes two: Name+".count" and Name+".sum", both sums.
type Point struct {
	Name      string
	Kind      Kind
	Delta     bool
	Monotonic bool
	Value     float64
	// Attrs are the resource's attributes followed by the point's, sorted
	// by key; a point attribute overrides a resource one of the same key.
	Attrs []Attr
}

// Limits bound what one Decode returns, so a small payload cannot make
// the broker build a huge structure.
const (
	maxPoints   = 20000
	maxAttrs    = 64
	maxDepth    = 8 // AnyValue nesting (arrays, key-value lists)
	maxAttrText = 1024
)

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// errMalformed wraps every decoding error.
var errMalformed = errors.New("telemetry: malformed metrics payload")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errMalformed, fmt.Sprintf(format, args...))
}

// field is one protobuf field: its number, wire type and payload (the
// bytes for wireBytes, else the integer bits).
type field struct {
	num  uint64
	typ  uint8
	data []byte
	bits uint64
}

// reader walks the fields of one protobuf message.
type reader struct{ b []byte }

func (r *reader) next() (field, bool, error) {
	if len(r.b) == 0 {
		return field{}, false, nil
	}
	tag, n := binary.Uvarint(r.b)
	if n <= 0 {
		return field{}, false, malformed("bad tag")
	}
	r.b = r.b[n:]
	f := field{num: tag >> 3, typ: uint8(tag & 7)}
	if f.num == 0 {
		return field{}, false, malformed("field number 0")
	}
	switch f.typ {
	case wireVarint:
		v, n := binary.Uvarint(r.b)
		if n <= 0 {
			return field{}, false, malformed("bad varint in field %d", f.num)
		}
		f.bits, r.b = v, r.b[n:]
	case wireFixed64:
		if len(r.b) < 8 {
			return field{}, false, malformed("short fixed64 in field %d", f.num)
		}
		f.bits, r.b = binary.LittleEndian.Uint64(r.b), r.b[8:]
	case wireFixed32:
		if len(r.b) < 4 {
			return field{}, false, malformed("short fixed32 in field %d", f.num)
		}
		f.bits, r.b = uint64(binary.LittleEndian.Uint32(r.b)), r.b[4:]
	case wireBytes:
		l, n := binary.Uvarint(r.b)
		if n <= 0 || l > uint64(len(r.b)-n) {
			return field{}, false, malformed("bad length in field %d", f.num)
		}
		f.data, r.b = r.b[n:n+int(l)], r.b[n+int(l):]
	default: // groups (3, 4) are not used by OTLP; 6 and 7 do not exist
		return field{}, false, malformed("wire type %d in field %d", f.typ, f.num)
	}
	return f, true, nil
}

// each calls fn for every field of msg.
func each(msg []byte, fn func(f field) error) error {
	r := reader{msg}
	for {
		f, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
	}
}

func (f field) want(typ uint8) error {
	if f.typ != typ {
		return malformed("field %d has wire type %d, want %d", f.num, f.typ, typ)
	}
	return nil
}

// decoder accumulates points across one payload.
type decoder struct {
	points []Point
}

// Decode reads an OTLP MetricsData (the same bytes as an
// ExportMetricsServiceRequest) and returns its data points. Metric kinds
// it does not keep (exponential histograms) are skipped.
func Decode(payload []byte) ([]Point, error) {
	d := decoder{}
	err := each(payload, func(f field) error {
		if f.num != 1 {
			return nil
		}
		if err := f.want(wireBytes); err != nil {
			return err
		}
		return d.resourceMetrics(f.data)
	})
	if err != nil {
		return nil, err
	}
	return d.points, nil
}

// resourceMetrics, metric and metricBody read their message twice: first
// the fields that apply to all its children (the resource, the name, the
// temporality), which may come after them, then the children one at a
// time. Collecting the children instead would allocate for every one of
// them before maxPoints is checked, and points without a value are not
// counted at all: 4 MiB of empty points would be 2 M slice headers.
func (d *decoder) resourceMetrics(msg []byte) error {
	var resAttrs []Attr
	err := each(msg, func(f field) error {
		switch f.num {
		case 1: // Resource
			if err := f.want(wireBytes); err != nil {
				return err
			}
			return each(f.data, func(f field) error {
				if f.num != 1 {
					return nil
				}
				var err error
				resAttrs, err = appendAttr(resAttrs, f, "the resource")
				return err
			})
		case 2: // ScopeMetrics: read after the resource, which may follow them
			return f.want(wireBytes)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return each(msg, func(f field) error {
		if f.num != 2 {
			return nil
		}
		return each(f.data, func(f field) error {
			if f.num != 2 {
				return nil
			}
			if err := f.want(wireBytes); err != nil {
				return err
			}
			return d.metric(f.data, resAttrs)
		})
	})
}

func (d *decoder) metric(msg []byte, resAttrs []Attr) error {
	var name string
	err := each(msg, func(f field) error {
		switch f.num {
		case 1:
			if err := f.want(wireBytes); err != nil {
				return err
			}
			name = string(f.data)
		case 5, 7, 9, 11: // gauge, sum, histogram, summary
			return f.want(wireBytes)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if name == "" {
		return malformed("metric without a name")
	}
	return each(msg, func(f field) error {
		switch f.num {
		case 5, 7, 9, 11:
			return d.metricBody(name, f.num, f.data, resAttrs)
		}
		return nil
	})
}

// Aggregation temporality values.
const temporalityDelta = 1

func (d *decoder) metricBody(name string, kind uint64, msg []byte, resAttrs []Attr) error {
	var delta, monotonic bool
	err := each(msg, func(f field) error {
		switch {
		case f.num == 1:
			return f.want(wireBytes)
		case f.num == 2 && kind != 5 && kind != 11:
			if err := f.want(wireVarint); err != nil {
				return err
			}
			delta = f.bits == temporalityDelta
		case f.num == 3 && kind == 7:
			if err := f.want(wireVarint); err != nil {
				return err
			}
			monotonic = f.bits != 0
		}
		return nil
	})
	if err != nil {
		return err
	}
	return each(msg, func(f field) error {
		if f.num != 1 {
			return nil
		}
		p := f.data
		switch kind {
		case 5:
			return d.numberPoint(p, Point{Name: name, Kind: Gauge}, resAttrs)
		case 7:
			return d.numberPoint(p, Point{Name: name, Kind: Sum, Delta: delta, Monotonic: monotonic}, resAttrs)
		case 9:
			// HistogramDataPoint: attributes 9, count 4, sum 5.
			return d.countSumPoint(p, name, delta, 9, resAttrs)
		case 11:
			// SummaryDataPoint: attributes 7, count 4, sum 5; always cumulative.
			return d.countSumPoint(p, name, false, 7, resAttrs)
		}
		return nil
	})
}

// numberPoint reads a NumberDataPoint: attributes 7, as_double 4,
// as_int 6.
func (d *decoder) numberPoint(msg []byte, p Point, resAttrs []Attr) error {
	var attrs []Attr
	var have bool
	err := each(msg, func(f field) error {
		switch f.num {
		case 7:
			var err error
			if attrs, err = appendAttr(attrs, f, p.Name); err != nil {
				return err
			}
		case 4:
			if err := f.want(wireFixed64); err != nil {
				return err
			}
			p.Value, have = math.Float64frombits(f.bits), true
		case 6:
			if err := f.want(wireFixed64); err != nil {
				return err
			}
			p.Value, have = float64(int64(f.bits)), true
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !have {
		return nil // a point with no value (a "no recorded value" flag) says nothing
	}
	p.Attrs = mergeAttrs(resAttrs, attrs)
	return d.add(p)
}

func (d *decoder) countSumPoint(msg []byte, name string, delta bool, attrField uint64, resAttrs []Attr) error {
	var attrs []Attr
	var count, sum float64
	var haveSum bool
	err := each(msg, func(f field) error {
		switch f.num {
		case attrField:
			var err error
			if attrs, err = appendAttr(attrs, f, name); err != nil {
				return err
			}
		case 4:
			if err := f.want(wireFixed64); err != nil {
				return err
			}
			count = float64(f.bits)
		case 5:
			if err := f.want(wireFixed64); err != nil {
				return err
			}
			sum, haveSum = math.Float64frombits(f.bits), true
		}
		return nil
	})
	if err != nil {
		return err
	}
	merged := mergeAttrs(resAttrs, attrs)
	if err := d.add(Point{Name: name + ".count", Kind: Sum, Delta: delta, Monotonic: true, Value: count, Attrs: merged}); err != nil {
		return err
	}
	if haveSum {
		return d.add(Point{Name: name + ".sum", Kind: Sum, Delta: delta, Value: sum, Attrs: merged})
	}
	return nil
}

func (d *decoder) add(p Point) error {
	if len(d.points) >= maxPoints {
		return malformed("more than %d data points", maxPoints)
	}
	d.points = append(d.points, p)
	return nil
}

// appendAttr reads the KeyValue in f onto attrs, refusing more than
// maxAttrs on one point (or resource), named by what.
func appendAttr(attrs []Attr, f field, what string) ([]Attr, error) {
	if err := f.want(wireBytes); err != nil {
		return nil, err
	}
	a, err := keyValue(f.data)
	if err != nil {
		return nil, err
	}
	if len(attrs) >= maxAttrs {
		return nil, malformed("more than %d attributes on %s", maxAttrs, what)
	}
	return append(attrs, a), nil
}

// mergeAttrs returns res and own sorted by key, own winning on a clash.
func mergeAttrs(res, own []Attr) []Attr {
	if len(res) == 0 && len(own) == 0 {
		return nil
	}
	out := make([]Attr, 0, len(res)+len(own))
	out = append(out, own...)
	for _, a := range res {
		if !slices.ContainsFunc(own, func(o Attr) bool { return o.Key == a.Key }) {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b Attr) int { return strings.Compare(a.Key, b.Key) })
	// Duplicate keys within one list: keep the last, as a map would.
	return slices.CompactFunc(out, func(a, b Attr) bool { return a.Key == b.Key })
}

// keyValue reads a KeyValue: key 1, AnyValue 2.
func keyValue(msg []byte) (Attr, error) { return keyValueAt(msg, 0) }

func keyValueAt(msg []byte, depth int) (Attr, error) {
	var a Attr
	err := each(msg, func(f field) error {
		switch f.num {
		case 1:
			if err := f.want(wireBytes); err != nil {
				return err
			}
			a.Key = string(f.data)
		case 2:
			if err := f.want(wireBytes); err != nil {
				return err
			}
			var sb strings.Builder
			if err := anyValue(&sb, f.data, depth); err != nil {
				return err
			}
			a.Value = sb.String()
		}
		return nil
	})
	if err != nil {
		return Attr{}, err
	}
	if a.Key == "" {
		return Attr{}, malformed("attribute without a key")
	}
	if len(a.Key) > maxAttrText {
		a.Key = a.Key[:maxAttrText]
	}
	if len(a.Value) > maxAttrText {
		a.Value = a.Value[:maxAttrText]
	}
	return a, nil
}

// anyValue renders an AnyValue: string 1, bool 2, int 3, double 4,
// array 5, key-value list 6, bytes 7.
func anyValue(sb *strings.Builder, msg []byte, depth int) error {
	if depth > maxDepth {
		return malformed("attribute values nested deeper than %d", maxDepth)
	}
	return each(msg, func(f field) error {
		if sb.Len() > maxAttrText {
			return nil
		}
		switch f.num {
		case 1:
			if err := f.want(wireBytes); err != nil {
				return err
			}
			sb.Write(f.data)
		case 2:
			if err := f.want(wireVarint); err != nil {
				return err
			}
			sb.WriteString(strconv.FormatBool(f.bits != 0))
		case 3:
			if err := f.want(wireVarint); err != nil {
				return err
			}
			sb.WriteString(strconv.FormatInt(int64(f.bits), 10))
		case 4:
			if err := f.want(wireFixed64); err != nil {
				return err
			}
			sb.WriteString(strconv.FormatFloat(math.Float64frombits(f.bits), 'g', -1, 64))
		case 5, 6: // ArrayValue / KeyValueList: values (or key-values) in field 1
			if err := f.want(wireBytes); err != nil {
				return err
			}
			sb.WriteByte('[')
			n := 0
			err := each(f.data, func(g field) error {
				if g.num != 1 {
					return nil
				}
				if err := g.want(wireBytes); err != nil {
					return err
				}
				if n > 0 {
					sb.WriteByte(',')
				}
				n++
				if f.num == 6 {
					a, err := keyValueAt(g.data, depth+1)
					if err != nil {
						return err
					}
					sb.WriteString(a.Key + "=" + a.Value)
					return nil
				}
				return anyValue(sb, g.data, depth+1)
			})
			sb.WriteByte(']')
			return err
		case 7:
			if err := f.want(wireBytes); err != nil {
				return err
			}
			sb.WriteString(fmt.Sprintf("%x", f.data))
		}
		return nil
	})
}
