import type { Behaviour, Script } from '../helpers/hostile-server.ts';
import { chatReply } from '../helpers/hostile-server.ts';

/**
 * The hostile-input table (issue 17): every input surface a careless or hostile user (or server) controls,
 * each with the one line and exit code it must produce. Placeholders in args: {S} the case's hostile server
 * (…/v1), {G} a healthy server, {T} the fixtures folder, {OUT} a fresh path that must not exist afterwards,
 * {P} a two-probe set, {CLOSED} a URL nobody listens on.
 */
export interface HostileCase {
  surface: string;
  name: string;
  args: string[];
  code: 0 | 1 | 2;
  /** The one stderr line, after `probate: `. */
  line: RegExp;
  env?: Record<string, string>;
  /** The hostile server's script (started only when given). */
  server?: Script;
  /** Folders (relative to {T}) whose contents must be unchanged afterwards. */
  unchanged?: string[];
}

const audit = (base: string, delivered: string, ...rest: string[]) => [
  'audit',
  '--base',
  base,
  '--delivered',
  delivered,
  '--probes',
  '{P}',
  '--out',
  '{OUT}',
  ...rest,
];
const okAudit = (...rest: string[]) => audit('vllm:{G}#base', 'vllm:{G}#delivered', ...rest);
const calibrate = (...rest: string[]) => [
  'judge',
  'calibrate',
  '--labels',
  '{T}/labels.json',
  '--judge',
  'vllm:{S}#judge',
  '--store',
  '{OUT}',
  ...rest,
];

const cases: HostileCase[] = [];
const add = (surface: string, list: Array<Omit<HostileCase, 'surface'>>) =>
  cases.push(...list.map((c) => ({ surface, ...c })));

// ── numeric flags: validated before anything is allocated, the bound named ──────────────────────────
const numeric: Array<[string, string, RegExp]> = [
  ['seed', 'abc', /^--seed: not a number; expected an integer from 0 to 4294967295$/],
  ['seed', '-1', /^--seed: -1 is out of range; expected an integer from 0 to 4294967295$/],
  ['seed', '1.5', /^--seed: 1\.5 is out of range; expected an integer/],
  ['seed', '4294967296', /^--seed: 4294967296 is out of range/],
  ['samples', '1e12', /^--samples: 1000000000000 is out of range; expected an integer from 1 to 10000$/],
  ['samples', '0', /^--samples: 0 is out of range/],
  ['samples', '-3', /^--samples: -3 is out of range/],
  ['samples', '2.5', /^--samples: 2\.5 is out of range/],
  ['samples', 'many', /^--samples: not a number/],
  [
    'concurrency',
    '1000000000',
    /^--concurrency: 1000000000 is out of range; expected an integer from 1 to 1024$/,
  ],
  ['concurrency', '0', /^--concurrency: 0 is out of range/],
  ['concurrency', '-8', /^--concurrency: -8 is out of range/],
  ['concurrency', 'NaN', /^--concurrency: not a number/],
  ['budget', '99999999999', /^--budget: 99999999999 is out of range; expected an integer from 0 to 1000000$/],
  ['budget', '-1', /^--budget: -1 is out of range/],
  ['budget', 'lots', /^--budget: not a number/],
  ['threads', '-4', /^--threads: -4 is out of range; expected an integer from 1 to 256$/],
  ['threads', '0', /^--threads: 0 is out of range/],
  ['threads', '100000', /^--threads: 100000 is out of range/],
  ['threads', 'x', /^--threads: not a number/],
  ['request-timeout', '0', /^--request-timeout: 0 is out of range; expected a number from 0\.05 to 86400$/],
  ['request-timeout', '-5', /^--request-timeout: -5 is out of range/],
  ['request-timeout', 'soon', /^--request-timeout: not a number/],
  ['idle-timeout', '1e9', /^--idle-timeout: 1000000000 is out of range/],
  ['connect-timeout', '0', /^--connect-timeout: 0 is out of range/],
  [
    'max-reply-bytes',
    '10',
    /^--max-reply-bytes: 10 is out of range; expected an integer from 1024 to 1073741824$/,
  ],
  ['max-reply-bytes', '1e12', /^--max-reply-bytes: 1000000000000 is out of range/],
  ['max-reply-bytes', 'big', /^--max-reply-bytes: not a number/],
];
add(
  'audit flags',
  numeric.map(([flag, value, line]) => ({
    name: `--${flag} ${value}`,
    args: okAudit(`--${flag}`, value),
    code: 2,
    line,
  })),
);
add('other commands: flags', [
  {
    name: 'bench zoo --seed abc',
    args: ['bench', 'zoo', '--seed', 'abc'],
    code: 2,
    line: /^--seed: not a number/,
  },
  {
    name: 'bench zoo --concurrency 1e9',
    args: ['bench', 'zoo', '--concurrency', '1e9'],
    code: 2,
    line: /^--concurrency: 1000000000 is out of range/,
  },
  {
    name: 'bench zoo --samples 1e12',
    args: ['bench', 'zoo', '--samples', '1e12'],
    code: 2,
    line: /^--samples: .* out of range/,
  },
  {
    name: 'bench zoo --budget 99999999999',
    args: ['bench', 'zoo', '--budget', '99999999999'],
    code: 2,
    line: /^--budget: .* out of range/,
  },
  {
    name: 'bench zoo --threads -4',
    args: ['bench', 'zoo', '--threads', '-4'],
    code: 2,
    line: /^--threads: -4 is out of range/,
  },
  {
    name: 'bench throughput --requests 0',
    args: ['bench', 'throughput', '--endpoint', 'vllm:{G}#delivered', '--requests', '0'],
    code: 2,
    line: /^--requests: 0 is out of range/,
  },
  {
    name: 'bench throughput --runs abc',
    args: ['bench', 'throughput', '--endpoint', 'vllm:{G}#delivered', '--runs', 'abc'],
    code: 2,
    line: /^--runs: not a number/,
  },
  {
    name: 'bench throughput --max-tokens -1',
    args: ['bench', 'throughput', '--endpoint', 'vllm:{G}#delivered', '--max-tokens', '-1'],
    code: 2,
    line: /^--max-tokens: -1 is out of range/,
  },
  {
    name: 'judge calibrate --concurrency 1e9',
    args: calibrate('--concurrency', '1e9'),
    code: 2,
    line: /^--concurrency: 1000000000 is out of range/,
  },
  {
    name: 'judge calibrate --attempts 0',
    args: calibrate('--attempts', '0'),
    code: 2,
    line: /^--attempts: 0 is out of range/,
  },
  {
    name: 'judge calibrate --request-timeout abc',
    args: calibrate('--request-timeout', 'abc'),
    code: 2,
    line: /^--request-timeout: not a number/,
  },
  {
    name: 'serve --port 70000',
    args: ['serve', 'local:{T}/none', '--port', '70000'],
    code: 2,
    line: /^--port: 70000 is out of range/,
  },
  {
    name: 'serve --threads -4',
    args: ['serve', 'local:{T}/none', '--threads', '-4'],
    code: 2,
    line: /^--threads: -4 is out of range/,
  },
  {
    name: 'gate serve --port -1',
    args: ['gate', 'serve', '--gate', '{T}', '--runs-root', '{T}', '--port', '-1'],
    code: 2,
    line: /^--port: -1 is out of range/,
  },
  {
    name: 'doctor --request-timeout 0',
    args: ['doctor', 'vllm:{G}#delivered', '--request-timeout', '0'],
    code: 2,
    line: /^--request-timeout: 0 is out of range/,
  },
  {
    name: 'doctor --max-reply-bytes 1',
    args: ['doctor', 'vllm:{G}#delivered', '--max-reply-bytes', '1'],
    code: 2,
    line: /^--max-reply-bytes: 1 is out of range/,
  },
]);

// ── flags given twice, bad choices, unknown or missing flags ────────────────────────────────────────
add('flag shape', [
  {
    name: '--policy twice',
    args: okAudit('--policy', 'a.yaml', '--policy', 'b.yaml'),
    code: 2,
    line: /^--policy: given 2 times; expected it once$/,
  },
  {
    name: '--out twice',
    args: [...okAudit(), '--out', '{T}/elsewhere'],
    code: 2,
    line: /^--out: given 2 times/,
  },
  {
    name: '--base twice',
    args: [...okAudit(), '--base', 'vllm:{G}#base'],
    code: 2,
    line: /^--base: given 2 times/,
  },
  {
    name: '--seed twice',
    args: okAudit('--seed', '1', '--seed', '2'),
    code: 2,
    line: /^--seed: given 2 times/,
  },
  {
    name: '--api-key-env twice',
    args: okAudit('--api-key-env', 'A', '--api-key-env', 'B'),
    code: 2,
    line: /^--api-key-env: given 2 times/,
  },
  {
    name: 'report --format pdf',
    args: ['report', '{T}/complete', '--format', 'pdf'],
    code: 2,
    line: /^--format: "pdf" is not allowed; expected one of "html", "md", "json", "junit", "sarif"$/,
  },
  {
    name: 'report --format twice',
    args: ['report', '{T}/complete', '--format', 'md', '--format', 'json'],
    code: 2,
    line: /^--format: .*|given 2 times/,
  },
  { name: 'unknown flag', args: okAudit('--sampels', '3'), code: 2, line: /^Unknown arguments?: sampels/ },
  {
    name: 'missing --delivered',
    args: ['audit', '--base', 'vllm:{G}#base'],
    code: 2,
    line: /^Missing required argument: delivered$/,
  },
  { name: 'no command', args: [], code: 2, line: /^name a command/ },
  {
    name: 'unknown command',
    args: ['audti'],
    code: 2,
    line: /^unknown command "audti"; did you mean audit\?$/,
  },
  {
    name: 'ledger without subcommand',
    args: ['ledger'],
    code: 2,
    line: /subcommand|Not enough non-option arguments/,
  },
  { name: 'report without run', args: ['report'], code: 2, line: /^Not enough non-option arguments/ },
]);

// ── model references ─────────────────────────────────────────────────────────────────────────────
const refCases: Array<[string, string, RegExp]> = [
  ['empty', '', /^--delivered: "" is not a model reference \(expected local:DIR/],
  ['no scheme', 'mymodel', /^--delivered: "mymodel" is not a model reference/],
  ['unknown scheme', 'ollama:llama3', /^--delivered: "ollama:llama3" is not a model reference/],
  [
    'vllm without model',
    'vllm:http://127.0.0.1:9/v1',
    /^--delivered: .*: model: expected a model name after #/,
  ],
  ['vllm with empty model', 'vllm:http://127.0.0.1:9/v1#', /model: expected a model name after #/],
  ['vllm ftp url', 'vllm:ftp://h/v1#m', /urls\.0?: ?expected an http\(s\) URL|expected an http\(s\) URL/],
  ['vllm no url', 'vllm:#m', /expected an http\(s\) URL/],
  ['vllm credentials in url', 'vllm:http://u:sk-SECRET@h/v1#m', /credentials in a URL are not accepted/],
  [
    'vllm ?token= query',
    'vllm:http://h/v1?token=sk-SECRET#m',
    /a query string \(\?token=…\) is never sent; name the environment variable holding a key with --api-key-env/,
  ],
  ['vllm space in model', 'vllm:http://h/v1#my model', /model name must not contain spaces/],
  ['hf without model', 'hf:', /^--delivered: "hf:": model: expected a model name after hf:/],
  ['hf with space', 'hf:org/my model', /model name must not contain spaces/],
  ['hf-endpoint without model', 'hf-endpoint:http://h/v1', /expected a model name after #/],
  ['hf-endpoint bad url', 'hf-endpoint:nota url#m', /expected an http\(s\) URL/],
  ['local without folder', 'local:', /expected a directory after local:/],
];
add(
  'model references',
  refCases.map(([name, ref, line]) => ({ name, args: audit('vllm:{G}#base', ref), code: 2, line })),
);
add('model references: resolved', [
  {
    name: 'hf: without a key',
    args: audit('vllm:{G}#base', 'hf:org/model'),
    env: { HF_TOKEN: '' },
    code: 2,
    line: /^hf:org\/model: no API key: set HF_TOKEN or name the variable holding it with --api-key-env$/,
  },
  {
    name: 'local: missing folder',
    args: audit('local:{T}/nowhere', 'vllm:{G}#delivered'),
    code: 2,
    line: /nowhere: not a model folder$/,
  },
  {
    name: 'local: a file, not a folder',
    args: audit('local:{T}/labels.json', 'vllm:{G}#delivered'),
    code: 2,
    line: /labels\.json: not a model folder$/,
  },
  {
    name: 'local: config model_type 5',
    args: audit('local:{T}/m-type5', 'vllm:{G}#delivered'),
    code: 2,
    line: /m-type5\/config\.json: model_type: .*expected string, received number$/,
  },
  {
    name: 'local: config without vocab_size',
    args: audit('local:{T}/m-novocab', 'vllm:{G}#delivered'),
    code: 2,
    line: /m-novocab\/config\.json: missing vocab_size$/,
  },
  {
    name: 'local: config not JSON',
    args: audit('local:{T}/m-badjson', 'vllm:{G}#delivered'),
    code: 2,
    line: /m-badjson\/config\.json: not valid JSON/,
  },
  {
    name: 'local: no config.json',
    args: audit('local:{T}/m-noconfig', 'vllm:{G}#delivered'),
    code: 2,
    line: /m-noconfig\/config\.json: missing$/,
  },
  {
    name: 'local: no chat template',
    args: audit('local:{T}/m-notemplate', 'vllm:{G}#delivered'),
    code: 2,
    line: /m-notemplate\/tokenizer_config\.json: missing chat_template$/,
  },
  {
    name: 'local: no onnx weights',
    args: audit('local:{T}/m-noonnx', 'vllm:{G}#delivered'),
    code: 2,
    line: /m-noonnx\/onnx\/model\.onnx: missing$/,
  },
]);

// ── endpoint replies before the first probe (identity, fingerprint): exit 1, nothing on disk ─────────
const identity: Array<[string, Script, RegExp]> = [
  [
    '/v1/models not JSON',
    { 'GET /v1/models': { body: '<html>oops' } },
    /response is not JSON: <html>oops: expected a vLLM\/OpenAI-compatible reply$/,
  ],
  [
    '/v1/models without data',
    { 'GET /v1/models': { body: '{"object":"list"}' } },
    /unexpected response from \/v1\/models: data: .*: expected a vLLM\/OpenAI-compatible reply$/,
  ],
  [
    '/v1/models data wrong type',
    { 'GET /v1/models': { body: '{"data":"many"}' } },
    /unexpected response from \/v1\/models: data/,
  ],
  [
    '/v1/models ids wrong type',
    { 'GET /v1/models': { body: '{"data":[{"id":5}]}' } },
    /unexpected response from \/v1\/models: data\.0\.id/,
  ],
  [
    '/v1/models 502 HTML',
    { 'GET /v1/models': { status: 502, body: '<html><body><h1>502 Bad Gateway</h1></body></html>' } },
    /HTTP 502: <html><body><h1>502 Bad Gateway/,
  ],
  [
    '/v1/models 200 with an error',
    { 'GET /v1/models': { body: '{"error":{"message":"engine dead"}}' } },
    /unexpected response from \/v1\/models/,
  ],
  [
    '/v1/models 401',
    { 'GET /v1/models': { status: 401, body: '{"error":"Unauthorized"}' } },
    /HTTP 401: Unauthorized: expected credentials: name the variable holding the API key with --api-key-env$/,
  ],
  [
    '/v1/models 403',
    { 'GET /v1/models': { status: 403, body: '{"error":"Forbidden"}' } },
    /HTTP 403: Forbidden: expected credentials/,
  ],
  [
    '/v1/models truncated',
    { 'GET /v1/models': { kind: 'truncate', body: '{"object":"list","data":[{"id":"delivered"}]}' } },
    /expected a reachable server|expected a vLLM/,
  ],
  [
    '/v1/models reset',
    { 'GET /v1/models': { kind: 'reset' } },
    /(socket|other side closed|ECONNRESET).*expected a reachable server/,
  ],
  [
    '/v1/models huge',
    { 'GET /v1/models': { kind: 'huge', bytes: 4 * 1024 * 1024 } },
    /reply over the 1048576-byte cap/,
  ],
  ['/v1/models empty body', { 'GET /v1/models': { body: '' } }, /response is not JSON/],
  [
    'model not served',
    { 'GET /v1/models': { body: '{"data":[{"id":"other"}]}' } },
    /model "(base|delivered)" is not served \(served: other\)$/,
  ],
  [
    '/version 500',
    { 'GET /version': { status: 500, body: '{"error":{"message":"boom"}}' } },
    /HTTP 500: boom$/,
  ],
  ['/version not JSON', { 'GET /version': { body: 'version one' } }, /response is not JSON: version one/],
  [
    '/version wrong type',
    { 'GET /version': { body: '{"version":12}' } },
    /unexpected response from \/version: version/,
  ],
  ['chat not JSON', { 'POST /v1/chat/completions': { body: 'not json' } }, /response is not JSON: not json/],
  [
    'chat without choices',
    { 'POST /v1/chat/completions': { body: '{"id":"x","usage":{}}' } },
    /unexpected response from \/v1\/chat\/completions: choices/,
  ],
  [
    'chat choices wrong type',
    { 'POST /v1/chat/completions': { body: '{"choices":"overloaded"}' } },
    /unexpected response from \/v1\/chat\/completions: choices/,
  ],
  [
    'chat content wrong type',
    { 'POST /v1/chat/completions': { body: chatReply('x').replace('"content":"x"', '"content":7') } },
    /unexpected response from \/v1\/chat\/completions: choices\.0\.message\.content/,
  ],
  [
    'chat 200 with an error object',
    { 'POST /v1/chat/completions': { body: '{"error":{"message":"CUDA out of memory","code":500}}' } },
    /unexpected response from \/v1\/chat\/completions/,
  ],
  [
    'chat 502 HTML',
    { 'POST /v1/chat/completions': { status: 502, body: '<html>Bad Gateway</html>' } },
    /HTTP 502: <html>Bad Gateway<\/html>$/,
  ],
  [
    'chat 401',
    { 'POST /v1/chat/completions': { status: 401, body: '{"error":"Unauthorized"}' } },
    /HTTP 401: Unauthorized: expected credentials/,
  ],
  [
    'chat context-length 400',
    {
      'POST /v1/chat/completions': {
        status: 400,
        body: JSON.stringify({
          error: {
            message: "This model's maximum context length is 8 tokens. However, you requested 900 tokens.",
            code: 400,
          },
        }),
      },
    },
    /maximum context length is 8 tokens.*expected a context window that fits the probes$/,
  ],
  [
    'chat 400 other',
    {
      'POST /v1/chat/completions': {
        status: 400,
        body: '{"error":{"message":"temperature must be positive"}}',
      },
    },
    /HTTP 400: temperature must be positive$/,
  ],
  [
    'chat 404 unknown model',
    {
      'POST /v1/chat/completions': {
        status: 404,
        body: '{"error":{"message":"The model `delivered` does not exist."}}',
      },
    },
    /HTTP 404: The model `delivered` does not exist\.$/,
  ],
  [
    'chat truncated',
    { 'POST /v1/chat/completions': { kind: 'truncate', body: chatReply('hello there') } },
    /expected a reachable server|expected a vLLM/,
  ],
  ['chat reset', { 'POST /v1/chat/completions': { kind: 'reset' } }, /expected a reachable server/],
  [
    'chat reply over the cap',
    { 'POST /v1/chat/completions': { kind: 'huge', bytes: 2 * 1024 * 1024 } },
    /reply over the 1048576-byte cap .*--max-reply-bytes/,
  ],
  ['chat empty body', { 'POST /v1/chat/completions': { body: '' } }, /response is not JSON/],
  [
    'chat JSON array',
    { 'POST /v1/chat/completions': { body: '[1,2,3]' } },
    /unexpected response from \/v1\/chat\/completions: \(root\)/,
  ],
];
for (const role of ['base', 'delivered'] as const)
  add(
    `endpoint before the first probe (${role})`,
    identity.map(([name, server, line]) => ({
      name,
      server,
      args: [
        ...(role === 'base'
          ? audit('vllm:{S}#base', 'vllm:{G}#delivered')
          : audit('vllm:{G}#base', 'vllm:{S}#delivered')),
        '--max-reply-bytes',
        '1048576',
      ],
      code: 1,
      line: new RegExp(
        `^--${role} vllm:http://127\\.0\\.0\\.1:\\d+/v1#${role}: .*${line.source.replace(/^\^/, '')}`,
      ),
    })),
  );
add('endpoint: unreachable', [
  {
    name: 'closed port (base)',
    args: audit('vllm:{CLOSED}#base', 'vllm:{G}#delivered'),
    code: 1,
    line: /^--base vllm:http:\/\/127\.0\.0\.1:\d+\/v1#base: .*ECONNREFUSED.*expected a reachable server/,
  },
  {
    name: 'closed port (delivered)',
    args: audit('vllm:{G}#base', 'vllm:{CLOSED}#delivered'),
    code: 1,
    line: /^--delivered .*ECONNREFUSED/,
  },
  {
    name: 'server never answers (request deadline)',
    server: { 'GET /version': { kind: 'hang' } },
    args: audit('vllm:{G}#base', 'vllm:{S}#delivered', '--request-timeout', '0.3'),
    code: 1,
    line: /no complete reply within 0\.3 s \(--request-timeout\)/,
  },
  {
    name: 'byte-per-interval body (request deadline)',
    server: { 'GET /v1/models': { kind: 'trickle', everyMs: 20 } },
    args: audit('vllm:{G}#base', 'vllm:{S}#delivered', '--request-timeout', '0.4'),
    code: 1,
    line: /no complete reply within 0\.4 s \(--request-timeout\)/,
  },
  {
    name: 'stalled body (idle timeout)',
    server: { 'GET /v1/models': { kind: 'trickle', everyMs: 5000 } },
    args: audit('vllm:{G}#base', 'vllm:{S}#delivered', '--idle-timeout', '0.3'),
    code: 1,
    line: /no bytes for 0\.3 s while waiting for the reply \(--idle-timeout\)/,
  },
  {
    name: 'keyed vLLM without a key (/v1 refused, /version open)',
    server: {
      'GET /v1/models': { status: 401, body: '{"error":"Unauthorized"}' },
      'POST /v1/chat/completions': { status: 401, body: '{"error":"Unauthorized"}' },
    },
    args: audit('vllm:{G}#base', 'vllm:{S}#delivered'),
    code: 1,
    line: /^--delivered .*HTTP 401: Unauthorized: expected credentials/,
  },
]);

// ── API key flags ──────────────────────────────────────────────────────────────────────────────────
add('API keys', [
  {
    name: '--api-key-env unset',
    args: okAudit('--api-key-env', 'PROBATE_TEST_UNSET_KEY'),
    code: 2,
    line: /^--api-key-env: environment variable PROBATE_TEST_UNSET_KEY is not set$/,
  },
  {
    name: '--api-key-env not a name',
    args: okAudit('--api-key-env', 'sk-123 456'),
    code: 2,
    line: /^--api-key-env: "sk-123 456" is not an environment variable name$/,
  },
  {
    name: '--base-api-key-env unset',
    args: okAudit('--base-api-key-env', 'PROBATE_TEST_UNSET_KEY'),
    code: 2,
    line: /PROBATE_TEST_UNSET_KEY is not set$/,
  },
  {
    name: '--delivered-api-key-env unset',
    args: okAudit('--delivered-api-key-env', 'PROBATE_TEST_UNSET_KEY'),
    code: 2,
    line: /PROBATE_TEST_UNSET_KEY is not set$/,
  },
  {
    name: '--judge-api-key-env unset',
    args: okAudit('--judge', 'vllm:{G}#judge', '--judge-api-key-env', 'PROBATE_TEST_UNSET_KEY'),
    code: 2,
    line: /PROBATE_TEST_UNSET_KEY is not set$/,
  },
  {
    name: '--agent-api-key-env unset',
    args: okAudit('--agent', 'vllm:{G}#judge', '--agent-api-key-env', 'PROBATE_TEST_UNSET_KEY'),
    code: 2,
    line: /PROBATE_TEST_UNSET_KEY is not set$/,
  },
  {
    name: 'doctor --api-key-env unset',
    args: ['doctor', 'vllm:{G}#delivered', '--api-key-env', 'PROBATE_TEST_UNSET_KEY'],
    code: 2,
    line: /PROBATE_TEST_UNSET_KEY is not set$/,
  },
  {
    name: 'judge calibrate --api-key-env unset',
    args: calibrate('--api-key-env', 'PROBATE_TEST_UNSET_KEY'),
    server: {},
    code: 2,
    line: /PROBATE_TEST_UNSET_KEY is not set$/,
  },
  {
    name: 'judge answers 401 without a key',
    server: { 'GET /v1/models': { status: 401, body: '{"error":"Unauthorized"}' } },
    args: calibrate(),
    code: 1,
    line: /^--judge vllm:.*#judge: HTTP 401: Unauthorized: expected credentials/,
  },
]);

// ── run folders ────────────────────────────────────────────────────────────────────────────────────
add('run folder', [
  {
    name: '--out is a file',
    args: [...okAudit(), '--out', '{T}/labels.json'].filter(
      (_, i, a) => !(a[i - 1] === '--out' && a[i] === '{OUT}') && !(a[i] === '--out' && a[i + 1] === '{OUT}'),
    ),
    code: 2,
    line: /^--out .*labels\.json: a file is there; expected a folder/,
  },
  {
    name: '--out under a file',
    args: okAudit().map((a) => (a === '{OUT}' ? '{T}/labels.json/run' : a)),
    code: 2,
    line: /^--out .*labels\.json\/run: .*labels\.json is a file; expected a folder path$/,
  },
  {
    name: '--out in /proc',
    args: okAudit().map((a) => (a === '{OUT}' ? '/proc/x/run' : a)),
    code: 2,
    line: /^--out \/proc\/x\/run: \/proc is a system pseudo-file-system/,
  },
  {
    name: '--out in /sys',
    args: okAudit().map((a) => (a === '{OUT}' ? '/sys/probate-run' : a)),
    code: 2,
    line: /^--out \/sys\/probate-run: \/sys is a system pseudo-file-system/,
  },
  {
    name: '--out holds a run',
    args: okAudit().map((a) => (a === '{OUT}' ? '{T}/complete' : a)),
    code: 2,
    line: /complete\/ledger\.sqlite already holds a run: use --resume or another --out$/,
    unchanged: ['complete'],
  },
  {
    name: '--resume on a missing folder',
    args: okAudit('--resume'),
    code: 2,
    line: /^--resume: .* does not exist; expected a run folder to resume$/,
  },
  {
    name: '--resume on an empty folder',
    args: okAudit('--resume').map((a) => (a === '{OUT}' ? '{T}/empty' : a)),
    code: 2,
    line: /^--resume: .*empty holds no run \(no ledger\.sqlite\)$/,
    unchanged: ['empty'],
  },
  {
    name: '--resume on attempts only',
    args: okAudit('--resume').map((a) => (a === '{OUT}' ? '{T}/attempts-only' : a)),
    code: 2,
    line: /^--resume: .*attempts-only holds no run \(its ledger has no run\.start\)$/,
    unchanged: ['attempts-only'],
  },
  {
    name: '--resume on a 0-byte ledger',
    args: okAudit('--resume').map((a) => (a === '{OUT}' ? '{T}/zero' : a)),
    code: 2,
    line: /zero\/ledger\.sqlite: empty file, not a probate ledger$/,
    unchanged: ['zero'],
  },
  {
    name: '--resume on a random ledger',
    args: okAudit('--resume').map((a) => (a === '{OUT}' ? '{T}/random' : a)),
    code: 2,
    line: /random\/ledger\.sqlite: not a probate ledger \(SQLITE_NOTADB/,
    unchanged: ['random'],
  },
]);

// ── ledgers handed to ledger verify and report ─────────────────────────────────────────────────────
const ledgers: Array<[string, string, RegExp]> = [
  ['missing folder', 'nowhere', /nowhere\/ledger\.sqlite: no ledger here$/],
  ['folder without a ledger', 'empty', /empty\/ledger\.sqlite: no ledger here|not found/],
  ['0-byte ledger', 'zero', /zero\/ledger\.sqlite: empty file, not a probate ledger$/],
  [
    'random bytes',
    'random',
    /random\/ledger\.sqlite: not a probate ledger \(SQLITE_NOTADB: file is not a database\)$/,
  ],
  [
    'foreign SQLite',
    'foreign',
    /foreign\/ledger\.sqlite: not a probate ledger \(an SQLite file without a records table\)$/,
  ],
  ['empty SQLite', 'emptydb', /emptydb\/ledger\.sqlite: not a probate ledger \(an empty SQLite file\)$/],
  ['ledger is a folder', 'dirledger', /dirledger\/ledger\.sqlite: not a file/],
];
add(
  'ledger verify',
  ledgers.map(([name, dir, line]) => ({
    name,
    args: ['ledger', 'verify', `{T}/${dir}`],
    code: 2,
    line,
    unchanged: [dir],
  })),
);
add('ledger verify: incomplete runs', [
  {
    name: 'attempts only (no run.start)',
    args: ['ledger', 'verify', '{T}/attempts-only'],
    code: 2,
    line: /attempts-only: holds no run \(no run\.start record\)$/,
    unchanged: ['attempts-only'],
  },
  {
    name: 'run.start without run.end',
    args: ['ledger', 'verify', '{T}/unfinished'],
    code: 2,
    line: /unfinished: run incomplete: it has no run\.end/,
    unchanged: ['unfinished'],
  },
  {
    name: 'aborted run',
    args: ['ledger', 'verify', '{T}/aborted'],
    code: 2,
    line: /aborted: run incomplete: aborted before it finished \(--delivered went away\)$/,
    unchanged: ['aborted'],
  },
  {
    name: 'manifest not JSON',
    args: ['ledger', 'verify', '{T}/badmanifest'],
    code: 2,
    line: /badmanifest\/manifest\.json: not valid JSON/,
    unchanged: ['badmanifest'],
  },
]);
// report names the run folder itself when it has no ledger at all.
const reportLine: Record<string, RegExp> = {
  nowhere: /nowhere: not a directory \(expected a probate run directory\)$/,
  empty: /empty\/ledger\.sqlite: not found \(no audit ran here\)$/,
};
add('report', [
  ...ledgers.map(([name, dir, line]) => ({
    name,
    args: ['report', `{T}/${dir}`],
    code: 2 as const,
    line: reportLine[dir] ?? line,
    unchanged: [dir],
  })),
  {
    name: 'attempts only',
    args: ['report', '{T}/attempts-only'],
    code: 2,
    line: /attempts-only: holds no run \(no run\.start record\); nothing to report$/,
    unchanged: ['attempts-only'],
  },
  {
    name: 'aborted run (rendered, said so)',
    args: ['report', '{T}/aborted'],
    code: 2,
    line: /aborted: run incomplete: aborted/,
    unchanged: ['aborted'],
  },
  {
    name: 'run folder is a file',
    args: ['report', '{T}/labels.json'],
    code: 2,
    line: /labels\.json: not a directory/,
  },
  {
    name: 'manifest not JSON',
    args: ['report', '{T}/badmanifest'],
    code: 2,
    line: /badmanifest\/manifest\.json: not valid JSON/,
    unchanged: ['badmanifest'],
  },
  {
    name: 'unfinished run (rendered, said so)',
    args: ['report', '{T}/unfinished'],
    code: 2,
    line: /unfinished: run incomplete: it has no run\.end/,
    unchanged: ['unfinished'],
  },
]);

// ── files: probe sets, policies, labels ───────────────────────────────────────────────────────────
const probeFiles: Array<[string, string, RegExp]> = [
  ['probe file missing', '{T}/nope.yaml', /^--probes .*nope\.yaml: no such file or folder$/],
  ['probe file not YAML', '{T}/probes/notyaml.yaml', /notyaml\.yaml: not valid YAML\/JSON/],
  ['probe file empty', '{T}/probes/empty.yaml', /empty\.yaml: \(root\): /],
  ['probe file unknown family', '{T}/probes/family.yaml', /family\.yaml: family: /],
  ['probe file no probes', '{T}/probes/noprobes.yaml', /noprobes\.yaml: probes: /],
  ['probe file wrong version type', '{T}/probes/version.yaml', /version\.yaml: version: /],
  [
    'probe file over the size limit',
    '{T}/probes/huge.yaml',
    /huge\.yaml: \d+ bytes is over the 8388608-byte limit for a probe set$/,
  ],
  ['probe folder without sets', '{T}/empty', /empty: no probe sets found/],
  ['sealed set garbage', '{T}/probes/garbage.sealed.json', /garbage\.sealed\.json: not valid JSON$/],
  [
    'sealed set over the limit',
    '{T}/probes/huge.sealed.json',
    /huge\.sealed\.json: \d+ bytes is over the 8388608-byte limit/,
  ],
];
add(
  'probe sets',
  probeFiles.map(([name, file, line]) => ({
    name,
    args: okAudit().map((a) => (a === '{P}' ? file : a)),
    env: { PROBATE_SEAL_KEY: '' },
    code: 2,
    line,
  })),
);
add('probe sets: duplicates and keys', [
  {
    name: 'two sets with one id',
    args: okAudit().flatMap((a) => (a === '{P}' ? [a, '{T}/probes/dup.yaml'] : [a])),
    code: 2,
    line: /dup\.yaml: id: probe set r is also defined in/,
  },
  {
    name: 'sealed set with a wrong key',
    args: okAudit('--seal-key-file', '{T}/wrong.key').map((a) =>
      a === '{P}' ? 'probes/reasoning/heldout.sealed.json' : a,
    ),
    code: 2,
    line: /heldout\.sealed\.json: cannot unseal: wrong key/,
  },
  {
    name: 'seal key file missing',
    args: okAudit('--seal-key-file', '{T}/nokey.key'),
    code: 2,
    line: /nokey\.key/,
  },
  {
    name: 'seal key file malformed',
    args: okAudit('--seal-key-file', '{T}/labels.json'),
    code: 2,
    line: /labels\.json/,
  },
]);
add('policy', [
  {
    name: 'policy missing',
    args: okAudit('--policy', '{T}/nope.yaml'),
    code: 2,
    line: /nope\.yaml: cannot read \(ENOENT\)$/,
  },
  {
    name: 'policy not YAML',
    args: okAudit('--policy', '{T}/policy-bad.yaml'),
    code: 2,
    line: /policy-bad\.yaml: not valid YAML/,
  },
  {
    name: 'policy wrong schema',
    args: okAudit('--policy', '{T}/policy-schema.yaml'),
    code: 2,
    line: /policy-schema\.yaml: /,
  },
  {
    name: 'policy over the size limit',
    args: okAudit('--policy', '{T}/policy-huge.yaml'),
    code: 2,
    line: /policy-huge\.yaml: \d+ bytes is over the 1048576-byte limit/,
  },
  {
    name: 'policy is a folder',
    args: okAudit('--policy', '{T}/empty'),
    code: 2,
    line: /empty: cannot read \(EISDIR\)$/,
  },
]);
add('labels (judge calibrate)', [
  {
    name: 'labels missing',
    server: {},
    args: calibrate().map((a) => (a === '{T}/labels.json' ? '{T}/nolabels.json' : a)),
    code: 2,
    line: /nolabels\.json: cannot read labels \(ENOENT\)$/,
  },
  {
    name: 'labels not JSON',
    server: {},
    args: calibrate().map((a) => (a === '{T}/labels.json' ? '{T}/probes/notyaml.yaml' : a)),
    code: 2,
    line: /notyaml\.yaml: not valid YAML/,
  },
  {
    name: 'labels wrong schema',
    server: {},
    args: calibrate().map((a) => (a === '{T}/labels.json' ? '{T}/probes/family.yaml' : a)),
    code: 2,
    line: /family\.yaml: /,
  },
  {
    name: 'labels over the size limit',
    server: {},
    args: calibrate().map((a) => (a === '{T}/labels.json' ? '{T}/labels-huge.json' : a)),
    code: 2,
    line: /labels-huge\.json: \d+ bytes is over the 16777216-byte limit/,
  },
  {
    name: 'rubrics folder missing',
    server: {},
    args: calibrate('--rubrics', '{T}/norubrics'),
    code: 2,
    line: /norubrics/,
  },
]);

// ── other endpoints: judge calibrate, doctor, bench throughput ─────────────────────────────────────
add('judge calibrate against a broken judge', [
  {
    name: 'judge 400',
    server: {
      'POST /v1/chat/completions': { status: 400, body: '{"error":{"message":"bad request from judge"}}' },
    },
    args: calibrate(),
    code: 1,
    line: /^--judge vllm:.*#judge: HTTP 400: bad request from judge$/,
  },
  {
    name: 'judge 401',
    server: { 'POST /v1/chat/completions': { status: 401, body: '{"error":"Unauthorized"}' } },
    args: calibrate(),
    code: 1,
    line: /^--judge .*HTTP 401: Unauthorized: expected credentials/,
  },
  {
    name: 'judge garbage',
    server: { 'POST /v1/chat/completions': { body: '%%garbage%%' } },
    args: calibrate(),
    code: 1,
    line: /^--judge .*response is not JSON: %%garbage%%/,
  },
  {
    name: 'judge wrong shape',
    server: { 'POST /v1/chat/completions': { body: '{"choices":[]}' } },
    args: calibrate(),
    code: 1,
    line: /^--judge .*(choices|no completion)/,
  },
  {
    name: 'judge closed port',
    args: calibrate().map((a) => a.replace('{S}', '{CLOSED}')),
    code: 1,
    line: /^--judge .*ECONNREFUSED/,
  },
  {
    name: 'judge not served',
    server: { 'GET /v1/models': { body: '{"data":[{"id":"other"}]}' } },
    args: calibrate(),
    code: 1,
    line: /model "judge" is not served/,
  },
  {
    name: 'judge trickles',
    server: { 'GET /v1/models': { kind: 'trickle', everyMs: 20 } },
    args: calibrate('--request-timeout', '0.3'),
    code: 1,
    line: /no complete reply within 0\.3 s/,
  },
]);
const doctor = (...rest: string[]) => ['doctor', 'vllm:{S}#delivered', ...rest];
add('doctor', [
  {
    name: 'closed port',
    args: ['doctor', 'vllm:{CLOSED}#delivered'],
    code: 1,
    line: /^doctor: cannot reach vllm:.*ECONNREFUSED/,
  },
  {
    name: 'server message shown (500)',
    server: { 'GET /version': { status: 500, body: '{"error":{"message":"GPU fell off the bus"}}' } },
    args: doctor(),
    code: 1,
    line: /^doctor: vllm:.*#delivered answered: HTTP 500: GPU fell off the bus$/,
  },
  {
    name: 'server message shown (401)',
    server: { 'GET /v1/models': { status: 401, body: '{"error":"Invalid API key"}' } },
    args: doctor(),
    code: 1,
    line: /answered: HTTP 401: Invalid API key$/,
  },
  {
    name: 'model not served',
    server: { 'GET /v1/models': { body: '{"data":[{"id":"other"}]}' } },
    args: doctor(),
    code: 2,
    line: /^doctor: model "delivered" is not served \(served: other\)$/,
  },
  {
    name: 'chat broken',
    server: { 'POST /v1/chat/completions': { status: 500, body: '{"error":{"message":"engine crashed"}}' } },
    args: doctor(),
    code: 1,
    line: /^doctor: chat failed: HTTP 500: engine crashed$/,
  },
  {
    name: 'trickle (request deadline)',
    server: { 'GET /version': { kind: 'trickle', everyMs: 20 } },
    args: doctor('--request-timeout', '0.3'),
    code: 1,
    line: /no complete reply within 0\.3 s \(--request-timeout\)/,
  },
  {
    name: 'hang (request deadline)',
    server: { 'GET /v1/models': { kind: 'hang' } },
    args: doctor('--request-timeout', '0.3'),
    code: 1,
    line: /no complete reply within 0\.3 s/,
  },
  {
    name: 'huge model list',
    server: { 'GET /v1/models': { kind: 'huge', bytes: 3 * 1024 * 1024 } },
    args: doctor(),
    code: 1,
    line: /reply over the 1048576-byte cap/,
  },
  { name: 'bad reference', args: ['doctor', 'vllm:nothing'], code: 2, line: /^doctor REF: / },
  {
    name: 'hf: without key',
    args: ['doctor', 'hf:org/model'],
    env: { HF_TOKEN: '' },
    code: 2,
    line: /no API key: set HF_TOKEN/,
  },
]);
add('bench throughput', [
  {
    name: 'reply cut mid-body',
    server: { 'POST /v1/chat/completions': { kind: 'truncate', body: chatReply('hello there') } },
    args: [
      'bench',
      'throughput',
      '--endpoint',
      'vllm:{S}#delivered',
      '--requests',
      '2',
      '--runs',
      '1',
      '--no-promptfoo',
      '--probes',
      '{P}',
    ],
    code: 1,
    line: /^--endpoint vllm:.*#delivered: /,
  },
  {
    name: 'server down',
    args: [
      'bench',
      'throughput',
      '--endpoint',
      'vllm:{CLOSED}#delivered',
      '--requests',
      '2',
      '--runs',
      '1',
      '--no-promptfoo',
      '--probes',
      '{P}',
    ],
    code: 1,
    line: /^--endpoint .*ECONNREFUSED/,
  },
  {
    name: 'two replicas',
    args: ['bench', 'throughput', '--endpoint', 'vllm:{G},{G}#delivered', '--probes', '{P}'],
    code: 2,
    line: /^--endpoint: expected vllm:URL#MODEL with one URL/,
  },
]);

export const HOSTILE_CASES: readonly HostileCase[] = cases;
export type { Behaviour };
