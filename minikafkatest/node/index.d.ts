// Types for @minikafka/testing. Field names of faults and answers are the
// control API's own (snake_case), as documented in docs/control-api.md.

export interface StartOptions {
  /** The minikafka binary; default $MINIKAFKA_BIN, then minikafka on PATH. */
  bin?: string;
  /** Extra flags, e.g. ['-default-partitions', '3']. */
  args?: string[];
  /** Data directory; default a temporary one that stop() removes. */
  dataDir?: string;
  /** How long to wait for the broker to answer; default 30000. */
  startTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

export interface FaultSpec {
  api_keys?: number[];
  min_version?: number;
  max_version?: number;
  topic?: string;
  partition?: number;
  group?: string;
  transactional_id?: string;
  client_id?: string;
  listener?: string;
  connection?: number;
  times?: number;
  probability?: number;
  seed?: number;
  error?: string;
  error_code?: number;
  drop?: 'before' | 'after';
  delay_ms?: number;
  delay_max_ms?: number;
  hold?: boolean;
  swallow?: boolean;
  throttle_ms?: number;
}

export interface Fault extends FaultSpec {
  id: number;
  fired: number;
  done: boolean;
  held: number;
}

export interface PartitionState {
  topic: string;
  partition: number;
  log_start_offset: number;
  high_watermark: number;
  last_stable_offset: number;
}

export interface SeedRecord {
  partition?: number;
  key?: string;
  value?: string;
  key_base64?: string;
  value_base64?: string;
  headers?: { key: string; value: string }[];
  timestamp_ms?: number;
}

export interface WaitOptions {
  /** Default 10000; the broker refuses more than 600000. */
  timeoutMs?: number;
}

export declare class MinikafkaError extends Error {
  /** HTTP status of a refused control API call; 0 when there was none. */
  status: number;
}

/** A wait whose timeout passed first; the message names the last state seen. */
export declare class MinikafkaTimeoutError extends MinikafkaError {}

export declare class Broker {
  readonly bin: string;
  /** "127.0.0.1:PORT": the bootstrap address for any Kafka client. */
  readonly bootstrapServers: string;
  /** The control API's base URL, "http://127.0.0.1:PORT". */
  readonly adminUrl: string;
  readonly dataDir: string;

  stop(): Promise<void>;
  /** The broker's last lines of output, for failure messages. */
  output(): string;
  call(method: string, path: string, body?: unknown, opts?: { timeoutMs?: number }): Promise<any>;

  fault(spec: FaultSpec): Promise<Fault>;
  faults(): Promise<Fault[]>;
  getFault(id: number): Promise<Fault>;
  removeFault(id: number): Promise<void>;
  clearFaults(): Promise<void>;
  release(id: number): Promise<Fault>;
  pausePartition(topic: string, partition?: number): Promise<Fault>;
  coordinatorUnavailable(group: string, loading?: boolean): Promise<Fault>;

  down(): Promise<void>;
  up(): Promise<void>;
  isDown(): Promise<boolean>;
  requests(opts?: { limit?: number; apiKey?: number }): Promise<any[]>;

  partition(topic: string, partition?: number): Promise<PartitionState>;
  highWatermark(topic: string, partition?: number): Promise<number>;
  group(group: string): Promise<any>;
  lag(group: string, topic: string): Promise<any>;

  createTopic(topic: string, opts?: { partitions?: number; configs?: Record<string, string> }): Promise<{ ok: boolean; topic: string }>;
  seed(topic: string, records: SeedRecord[], opts?: { transaction?: 'commit' | 'abort' }): Promise<{ partition: number; offset: number }[]>;

  waitHighWatermark(topic: string, partition: number, offset: number, opts?: WaitOptions): Promise<void>;
  waitTopic(topic: string, opts?: WaitOptions): Promise<void>;
  waitGroupStable(group: string, members: number, opts?: WaitOptions): Promise<void>;
  waitLagZero(group: string, topic: string, opts?: WaitOptions): Promise<void>;
  waitTransaction(transactionalId: string, opts?: WaitOptions): Promise<void>;

  /** Removes every fault and brings the broker up if it is down; topics stay. */
  reset(): Promise<void>;
}

/** Starts a broker on free loopback ports; resolves once it answers. */
export declare function start(opts?: StartOptions): Promise<Broker>;

/** The binary start() would run: bin, else $MINIKAFKA_BIN, else PATH. */
export declare function findBinary(bin?: string): string;
