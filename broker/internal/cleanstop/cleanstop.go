// Package cleanstop is the clean-shutdown marker, as Kafka's
// .kafka_cleanshutdown: the broker's Close writes
// DataDir/clean_shutdown (durably) once every partition log closed without
// error, which means every log file is durable as it is. The next start
// finds it, opens the logs knowing that (logstore.Options.CleanShutdown: a
// rescanned active segment needs no fsync), and removes it durably before
// any client is served, so a crash from then on is recovered as a crash.
// Small active segments get no index files at Close (logstore), so after
// a clean stop their rescan is a read of a few bytes and nothing more.
//
// The marker also carries every partition directory's listing, taken
// right after its log closed, so the next start opens each log by it
// (logstore.Options.Listing) instead of reading 10 000 directories. Its
// format is text:
//
//	minikafka clean shutdown 2
//	<partition dir, relative to DataDir> TAB <file> TAB <file> ...
//	...
//	crc32c <8 hex digits: CRC32C of every byte before this line>
//
// The first line alone (a marker from before the listings, or with a
// listing that does not parse) still marks a clean shutdown; partitions
// without a listing read their directory.
//
// The package owns the file and its format; the broker decides when to
// write it (Mark, after every log closed), take it (Take, before the logs
// open) and drop it (Drop, once they are open), and hands each log its
// listing (Key).
package cleanstop

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/minikafka/minikafka/internal/vfs"
)

const (
	cleanShutdownHeader  = "minikafka clean shutdown"
	cleanListingsVersion = "2"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Key names a partition directory in the marker: relative to the data
// dir, so a data dir moved as a whole keeps its listings.
func Key(dataDir, dir string) string {
	return strings.TrimPrefix(strings.TrimPrefix(dir, dataDir), "/")
}

// encodeCleanMarker is the marker's content for listings.
func encodeCleanMarker(listings map[string][]string) []byte {
	var buf bytes.Buffer
	buf.WriteString(cleanShutdownHeader + " " + cleanListingsVersion + "\n")
	for _, dir := range slices.Sorted(maps.Keys(listings)) {
		names := listings[dir]
		if strings.ContainsAny(dir, "\t\n") || slices.ContainsFunc(names, func(n string) bool { return strings.ContainsAny(n, "\t\n") }) {
			continue // not representable: that log reads its directory
		}
		buf.WriteString(dir)
		for _, n := range names {
			buf.WriteByte('\t')
			buf.WriteString(n)
		}
		buf.WriteByte('\n')
	}
	fmt.Fprintf(&buf, "crc32c %08x\n", crc32.Checksum(buf.Bytes(), castagnoli))
	return buf.Bytes()
}

// decodeCleanMarker returns the listings of a marker; nil (with the reason)
// when it carries none that can be trusted.
func decodeCleanMarker(data []byte) (map[string][]string, error) {
	header := cleanShutdownHeader + " " + cleanListingsVersion + "\n"
	if !bytes.HasPrefix(data, []byte(header)) {
		return nil, nil // an older marker: no listings
	}
	// The last line is the checksum of everything before it.
	trimmed := bytes.TrimSuffix(data, []byte("\n"))
	i := bytes.LastIndexByte(trimmed, '\n')
	body, last := data[:i+1], trimmed[i+1:]
	sum, ok := bytes.CutPrefix(last, []byte("crc32c "))
	want, err := strconv.ParseUint(string(sum), 16, 32)
	if !ok || err != nil || uint32(want) != crc32.Checksum(body, castagnoli) {
		return nil, errors.New("listings checksum mismatch")
	}
	listings := map[string][]string{}
	for line := range bytes.Lines(body[len(header):]) {
		fields := strings.Split(strings.TrimSuffix(string(line), "\n"), "\t")
		listings[fields[0]] = append([]string{}, fields[1:]...)
	}
	return listings, nil
}

// File is the marker's name in the data dir.
const File = "clean_shutdown"

// SmallActiveBytes is logstore's SmallActiveBytes for every partition:
// below it an active segment is rescanned at open rather than indexed at
// Close (10 000 partitions of 128 KiB each would be 1.25 GiB to read
// after a restart; of a few records each, next to nothing).
const SmallActiveBytes = 128 << 10

func markerPath(dataDir string) string { return path.Join(dataDir, File) }

// Mark writes the marker, with the partitions' listings, after a Close
// without errors.
func Mark(fsys vfs.FS, dataDir string, listings map[string][]string) error {
	if err := vfs.WriteFileAtomic(fsys, markerPath(dataDir), encodeCleanMarker(listings), 0o644); err != nil {
		return fmt.Errorf("broker: writing the clean-shutdown marker: %w", err)
	}
	return nil
}

// Take reports whether the marker is there, and the partition listings
// it carries; listings it cannot trust are logged to log and left out.
func Take(fsys vfs.FS, dataDir string, log *slog.Logger) (bool, map[string][]string, error) {
	data, err := vfs.ReadFile(fsys, markerPath(dataDir))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil, nil
	case err != nil:
		return false, nil, fmt.Errorf("broker: reading the clean-shutdown marker: %w", err)
	}
	listings, err := decodeCleanMarker(data)
	if err != nil {
		log.Warn("clean-shutdown marker: partition listings unusable; listing every partition directory", "err", err)
	}
	return true, listings, nil
}

// Drop removes the marker, durably, once the logs are open.
func Drop(fsys vfs.FS, dataDir string) error {
	err := fsys.Remove(markerPath(dataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = fsys.SyncDir(dataDir)
	}
	if err != nil {
		return fmt.Errorf("broker: removing the clean-shutdown marker: %w", err)
	}
	return nil
}
