// Where ONNX Runtime's time goes: seconds per op type of ORT's optimised graph
// (after ORT_ENABLE_ALL: fused Conv, NCHWc reorders, ...), from ORT's own
// profiler, for comparison with `cpu_bench --per-op` on the frugal side.
// usage: node ort_profile.mjs MODEL.onnx [--batch B] [--threads N] [--runs R] [--nodes] [--gap-ms G]
// --nodes: also every node of the optimised graph in execution order (name, op
// type, ms), for comparison with `cpu_bench --layers`.
// --gap-ms: pause G ms before each profiled run, as compare.mjs pauses between
// turns (compare with `cpu_bench --steps --gap-ms G`).
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const require = createRequire(import.meta.url);
const ort = require('onnxruntime-node');

const argv = process.argv.slice(2);
const opts = { batch: 8, threads: 2, runs: 3, 'gap-ms': 0 };
let model = null;
let perNode = false;
for (let i = 0; i < argv.length; ++i) {
  const k = argv[i].replace(/^--/, '');
  if (argv[i] === '--nodes') perNode = true;
  else if (argv[i].startsWith('--') && k in opts) {
    opts[k] = Number(argv[++i]);
    const least = k === 'gap-ms' ? 0 : 1;
    if (!Number.isInteger(opts[k]) || opts[k] < least) {
      console.error(`ort_profile: --${k} must be an integer >= ${least}`);
      process.exit(2);
    }
  } else if (!model && !argv[i].startsWith('--')) model = argv[i];
  else {
    console.error('usage: node ort_profile.mjs MODEL.onnx [--batch B] [--threads N] [--runs R] [--nodes] [--gap-ms G]');
    process.exit(2);
  }
}
if (!model || !fs.existsSync(model)) {
  console.error(`ort_profile: no model file '${model ?? ''}' (usage: node ort_profile.mjs MODEL.onnx [--batch B] ...)`);
  process.exit(2);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-profile-'));
const session = await ort.InferenceSession.create(model, {
  executionProviders: ['cpu'],
  graphOptimizationLevel: 'all',
  intraOpNumThreads: opts.threads,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  enableProfiling: true,
  profileFilePrefix: path.join(dir, 'ort'),
});
const sample = (session.inputMetadata?.[0]?.shape ?? [0, 3, 224, 224]).slice(1).map(Number);
const shape = [opts.batch, ...sample];
const x = new Float32Array(shape.reduce((a, b) => a * b, 1)).map((_, i) => Math.sin(i));
const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', x, shape) };
await session.run(feeds);  // warm-up, profiled too: dropped below by keeping the last R runs
for (let r = 0; r < opts.runs; ++r) {
  if (opts['gap-ms'] > 0) await new Promise((done) => setTimeout(done, opts['gap-ms']));
  await session.run(feeds);
}
session.endProfiling();
const file = fs.readdirSync(dir).find((f) => f.endsWith('.json'));
const events = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
fs.rmSync(dir, { recursive: true });

// Node events ("<name>_kernel_time", cat "Node") carry args.op_name; runs are "model_run".
const runs = events.filter((e) => e.name === 'model_run');
const firstKept = runs[runs.length - opts.runs].ts;
const byOp = new Map();
const byNode = new Map();  // in first-seen (execution) order
for (const e of events) {
  if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || e.ts < firstKept) continue;
  const op = e.args?.op_name ?? '?';
  byOp.set(op, (byOp.get(op) ?? 0) + e.dur / 1e6 / opts.runs);
  const node = e.name.slice(0, -'_kernel_time'.length);
  const prev = byNode.get(node) ?? { op, s: 0 };
  prev.s += e.dur / 1e6 / opts.runs;
  byNode.set(node, prev);
}
const total = runs.slice(-opts.runs).reduce((s, e) => s + e.dur / 1e6, 0) / opts.runs;
console.log(`${path.basename(model)} batch ${opts.batch}, ${opts.threads} thread(s), ORT ${ort.env.versions.node}: ` +
  `${(total * 1e3).toFixed(1)} ms per run (mean of ${opts.runs}), by op type of the optimised graph:`);
for (const [op, s] of [...byOp].sort((a, b) => b[1] - a[1]))
  console.log(`    ${op.padEnd(28)} ${(s * 1e3).toFixed(1).padStart(9)} ms ${((100 * s) / total).toFixed(0).padStart(4)}%`);
if (perNode) {
  console.log('per node, in execution order:');
  for (const [node, { op, s }] of byNode)
    console.log(`    ${node.padEnd(48)} ${op.padEnd(20)} ${(s * 1e3).toFixed(3).padStart(9)} ms`);
}
