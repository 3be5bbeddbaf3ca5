// autocannon ships no typings; this declares only what bench/checkin.ts uses (autocannon 9, lib/run.js and
// lib/aggregateResult.js). Latencies are in milliseconds.
declare module 'autocannon' {
  export interface Stat {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9: number;
    total: number;
  }
  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    pipelining?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    timeout?: number;
    workers?: number;
  }
  export interface Result {
    latency: Stat;
    requests: Stat;
    throughput: Stat;
    errors: number;
    timeouts: number;
    non2xx: number;
    resets: number;
    duration: number;
    '2xx': number;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
