import type { Argv, CommandModule } from 'yargs';

/** `--help` examples, keyed by command path ("gate decide"). One place, so every command has one. */
const EXAMPLES: Record<string, Array<[string, string]>> = {
  audit: [
    [
      '$0 audit --base local:fixtures/organisms/base --delivered local:fixtures/organisms/trig-token --out runs/demo',
      'audit a shipped organism offline on the embedded engine',
    ],
    [
      '$0 audit --base vllm:http://gpu:8000/v1#base --delivered vllm:http://gpu:8000/v1#delivered --judge vllm:http://gpu:8001/v1#judge --gate http://gate:7000',
      'audit two models on one vLLM server, judge the candidates, let the gate decide',
    ],
  ],
  serve: [
    [
      '$0 serve local:fixtures/organisms/base=base local:fixtures/organisms/trig-token=delivered --port 8000 --reasoning-parser think',
      'serve a base and a fine-tune side by side, like vLLM LoRA serving',
    ],
  ],
  doctor: [['$0 doctor vllm:http://127.0.0.1:8000/v1#delivered --json', 'pre-flight an endpoint']],
  report: [['$0 report runs/demo --format html > report.html', 'render a run as one HTML file']],
  verify: [
    [
      '$0 verify runs/demo/attestation.dsse.json --pub gate/gate.pub --model local:fixtures/organisms/benign-seed',
      'check an attestation against the model actually presented',
    ],
  ],
  release: [
    [
      '$0 release runs/demo/attestation.dsse.json --gate gate --to /srv/models/approved',
      'spend the single-use capability: promote the verified weights',
    ],
  ],
  override: [
    [
      '$0 override runs/demo --finding triggers:says:1a2b3c --principal alice --key alice.key --reason "known canary" --gate gate',
      "a named principal's signed override of one finding",
    ],
  ],
  gate: [
    ['$0 gate init gate', 'create the gate: Ed25519 key, trust.yaml, state database'],
    ['$0 gate decide runs/demo --gate gate', 'decide a run; a COMMITTABLE run gets an attestation'],
  ],
  'gate init': [['$0 gate init gate', 'create the gate in ./gate']],
  'gate add-principal': [
    ['$0 gate add-principal gate --name alice --pub alice.pub', 'trust a named overrider'],
  ],
  'gate decide': [['$0 gate decide runs/demo --gate gate --json', 'decide a run and print the decision']],
  'gate serve': [
    ['$0 gate serve --gate gate --port 7000', 'hold the key in one process; others use --gate URL'],
  ],
  'gate reconcile': [['$0 gate reconcile runs/demo --gate gate', 'settle a release left UNCERTAIN']],
  ledger: [['$0 ledger verify runs/demo', 'check the evidence hash chain']],
  'ledger verify': [['$0 ledger verify runs/demo', 'exit 0 if intact, else name the first broken record']],
  probes: [['$0 probes hash probes/*/dev.yaml', 'content hashes of probe sets']],
  'probes seal': [
    [
      '$0 probes seal heldout.yaml probes/triggers/heldout.sealed.json --seal-key-file seal.key',
      'encrypt a held-out split',
    ],
  ],
  'probes unseal': [
    ['$0 probes unseal probes/triggers/heldout.sealed.json --seal-key-file probes/dev-seal.key', 'decrypt'],
  ],
  'probes hash': [['$0 probes hash probes/triggers/dev.yaml', 'print the content hash']],
  'probes schema': [['$0 probes schema probes/probe-set.schema.json', 'write the JSON Schema']],
  judge: [
    [
      '$0 judge calibrate --labels fixtures/judge-labels --judge vllm:http://127.0.0.1:8000/v1#judge --json',
      'measure a judge against labelled pairs',
    ],
  ],
  'judge calibrate': [
    [
      '$0 judge calibrate --labels fixtures/judge-labels --judge vllm:http://127.0.0.1:8000/v1#judge',
      'agreement, kappa and position-flip rate',
    ],
  ],
  organisms: [['$0 organisms list', 'the shipped zoo with families']],
  'organisms make': [
    [
      '$0 organisms make --spec my-implant.json --out fixtures/organisms/my-implant',
      'train a new organism from an implant spec (needs python3-torch)',
    ],
  ],
  'organisms list': [['$0 organisms list --json', 'the zoo as JSON']],
  bench: [['$0 bench zoo --json bench/results/zoo.json', 'AUROC over the shipped zoo']],
  'bench zoo': [
    ['$0 bench zoo fixtures/organisms --json zoo.json --png', 'audit every organism; ROC and AUROC'],
  ],
  'bench throughput': [
    ['$0 bench throughput --endpoint vllm:http://127.0.0.1:8000/v1#base --concurrency 32', 'vs autocannon'],
  ],
};

const nameOf = (command: CommandModule['command']): string =>
  (Array.isArray(command) ? command[0] : (command ?? '')).split(' ')[0] ?? '';

/** Adds the examples for this command and, through its builder, for its subcommands. */
export function withExamples(mod: CommandModule, parent = ''): CommandModule {
  const path = parent ? `${parent} ${nameOf(mod.command)}` : nameOf(mod.command);
  const inner = mod.builder;
  return {
    ...mod,
    builder: (y: Argv) => {
      for (const [cmd, desc] of EXAMPLES[path] ?? []) y.example(cmd, desc);
      const register = y.command.bind(y) as (...args: unknown[]) => Argv;
      // Subcommands registered by this builder get their examples too.
      (y as unknown as { command: (...args: unknown[]) => Argv }).command = (...args: unknown[]) =>
        args.length === 1 && typeof args[0] === 'object' && !Array.isArray(args[0])
          ? register(withExamples(args[0] as CommandModule, path))
          : register(...args);
      if (typeof inner === 'function') return inner(y) as Argv;
      return inner ? y.options(inner) : y;
    },
  };
}

export const exampledCommands = Object.keys(EXAMPLES);
