package main

// The control-API verbs (fault, inspect, wait, seed) speak JSON over HTTP
// to a minikafka started with -admin-addr, not Kafka: faults and
// inspection are minikafka's own. adminClient is what they share.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// adminClient calls the control API at addr.
type adminClient struct {
	addr, tokenFile string
	http            *http.Client
}

// adminFlags registers -admin-addr and -admin-token-file on c (env
// MINIKAFKA_ADMIN_ADDR, MINIKAFKA_ADMIN_TOKEN_FILE).
func (c *cliCmd) adminFlags() *adminClient {
	c.controlVerb = true
	a := &adminClient{http: &http.Client{}}
	def := "127.0.0.1:9644"
	if v, ok := c.env.lookupEnv("MINIKAFKA_ADMIN_ADDR"); ok && v != "" {
		def = v
	}
	tf, _ := c.env.lookupEnv("MINIKAFKA_ADMIN_TOKEN_FILE")
	c.fs.StringVar(&a.addr, "admin-addr", def, "`host:port` of the broker's control API (its -admin-addr; env MINIKAFKA_ADMIN_ADDR)")
	c.fs.StringVar(&a.tokenFile, "admin-token-file", tf, "`file` holding the control API's bearer token (env MINIKAFKA_ADMIN_TOKEN_FILE)")
	return a
}

// do sends in (nil: no body) as JSON and decodes the answer into out (nil:
// ignore it). An error answer becomes an error carrying the broker's
// message.
func (a *adminClient) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	base := a.addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(base, "/")+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.tokenFile != "" {
		tok, err := readTokenFile(a.tokenFile)
		if err != nil {
			return fmt.Errorf("-admin-token-file: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("control API at %s: %w (is the broker running with -admin-addr?)", a.addr, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("control API at %s: reading the answer: %w", a.addr, err)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			// The broker's words name what is wrong; the HTTP method
			// and path would only be noise on a command line.
			return errors.New(e.Error)
		}
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: bad answer: %w", method, path, err)
		}
	}
	return nil
}
