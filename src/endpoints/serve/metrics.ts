/** vLLM's e2e latency buckets (seconds). */
const LATENCY_BUCKETS = [
  0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680,
];

interface ModelCounters {
  promptTokens: number;
  generationTokens: number;
  success: Map<string, number>;
  running: number;
  latencyBuckets: number[];
  latencySum: number;
  latencyCount: number;
}

/** Prometheus counters under vLLM's metric names, one set per served model; owned by one server. */
export class ServerMetrics {
  private readonly models = new Map<string, ModelCounters>();

  private of(model: string): ModelCounters {
    let m = this.models.get(model);
    if (!m) {
      m = {
        promptTokens: 0,
        generationTokens: 0,
        success: new Map(),
        running: 0,
        latencyBuckets: LATENCY_BUCKETS.map(() => 0),
        latencySum: 0,
        latencyCount: 0,
      };
      this.models.set(model, m);
    }
    return m;
  }

  register(model: string): void {
    this.of(model);
  }

  /** Counts a request as running until the returned function is called with its outcome. */
  start(
    model: string,
  ): (done?: { promptTokens: number; generationTokens: number; finished: string[] }) => void {
    const m = this.of(model);
    const t0 = performance.now();
    m.running++;
    let ended = false;
    return (done) => {
      if (ended) return;
      ended = true;
      m.running--;
      if (!done) return;
      m.promptTokens += done.promptTokens;
      m.generationTokens += done.generationTokens;
      for (const reason of done.finished) m.success.set(reason, (m.success.get(reason) ?? 0) + 1);
      const seconds = (performance.now() - t0) / 1000;
      LATENCY_BUCKETS.forEach((le, i) => {
        if (seconds <= le) m.latencyBuckets[i]!++;
      });
      m.latencySum += seconds;
      m.latencyCount++;
    };
  }

  render(waiting: (model: string) => number): string {
    const lines: string[] = [];
    const family = (name: string, type: string, help: string, rows: string[]) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...rows);
    };
    const each = (fn: (label: string, m: ModelCounters, name: string) => string[]) =>
      [...this.models].flatMap(([name, m]) => fn(`model_name="${name.replaceAll('"', '\\"')}"`, m, name));
    family(
      'vllm:num_requests_running',
      'gauge',
      'Requests being generated.',
      each((l, m) => [`vllm:num_requests_running{${l}} ${m.running}`]),
    );
    family(
      'vllm:num_requests_waiting',
      'gauge',
      'Sequences waiting to join the batch.',
      each((l, _m, name) => [`vllm:num_requests_waiting{${l}} ${waiting(name)}`]),
    );
    family(
      'vllm:prompt_tokens_total',
      'counter',
      'Prefill tokens processed.',
      each((l, m) => [`vllm:prompt_tokens_total{${l}} ${m.promptTokens}`]),
    );
    family(
      'vllm:generation_tokens_total',
      'counter',
      'Generation tokens processed.',
      each((l, m) => [`vllm:generation_tokens_total{${l}} ${m.generationTokens}`]),
    );
    family(
      'vllm:request_success_total',
      'counter',
      'Successfully processed requests.',
      each((l, m) =>
        ['stop', 'length', ...[...m.success.keys()].filter((k) => k !== 'stop' && k !== 'length')].map(
          (reason) =>
            `vllm:request_success_total{${l},finished_reason="${reason}"} ${m.success.get(reason) ?? 0}`,
        ),
      ),
    );
    family(
      'vllm:e2e_request_latency_seconds',
      'histogram',
      'End-to-end request latency in seconds.',
      each((l, m) => [
        ...LATENCY_BUCKETS.map(
          (le, i) => `vllm:e2e_request_latency_seconds_bucket{${l},le="${le}"} ${m.latencyBuckets[i]}`,
        ),
        `vllm:e2e_request_latency_seconds_bucket{${l},le="+Inf"} ${m.latencyCount}`,
        `vllm:e2e_request_latency_seconds_sum{${l}} ${m.latencySum}`,
        `vllm:e2e_request_latency_seconds_count{${l}} ${m.latencyCount}`,
      ]),
    );
    return `${lines.join('\n')}\n`;
  }
}
