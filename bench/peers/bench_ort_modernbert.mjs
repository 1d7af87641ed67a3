// SPDX-License-Identifier: Apache-2.0
// ONNX Runtime (onnxruntime-node, CPU EP) latency of a ModernBERT ONNX model at several lengths:
// ../shared/peers/node/bench_ort.mjs with feeds for the graph's own inputs (ModernBERT has no
// token_type_ids). Copy into a writable copy of ../shared/peers/node (it needs its node_modules).
// usage: node bench_ort_modernbert.mjs --model M.onnx --threads 1 --inputs DIR --seqs 512,2048
//          [--warmup 1] [--runs 5] [--budget 60] [--outdir DIR]
// DIR/seq{S}.json holds {input_ids, attention_mask, ...} (int arrays, batch 1). Prints one JSON
// object; writes last_hidden_state as raw float32 to OUTDIR/seq{S}.f32.
import * as ort from 'onnxruntime-node';
import fs from 'node:fs';
import path from 'node:path';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const threads = parseInt(args.threads ?? '1');
const seqs = (args.seqs ?? '512,2048').split(',').map(Number);
const warmup = parseInt(args.warmup ?? '1');
const runs = parseInt(args.runs ?? '5');
const minRuns = Math.min(runs, 3);
const budgetNs = BigInt(Math.round(parseFloat(args.budget ?? '60') * 1e9));

const session = await ort.InferenceSession.create(args.model, {
  executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
  executionMode: 'sequential', graphOptimizationLevel: 'all',
});
const result = { runtime: 'onnxruntime-node ' + ort.env.versions.common, model: args.model, threads, seqs: {} };
for (const S of seqs) {
  const inp = JSON.parse(fs.readFileSync(path.join(args.inputs, `seq${S}.json`), 'utf8'));
  const feeds = {};
  for (const name of session.inputNames) {
    feeds[name] = new ort.Tensor('int64', BigInt64Array.from(inp[name].map(BigInt)), [1, S]);
  }
  let out;
  for (let i = 0; i < warmup; i++) out = await session.run(feeds);
  const times = [];
  const start = process.hrtime.bigint();
  while (times.length < runs) {
    const a = process.hrtime.bigint();
    out = await session.run(feeds);
    const b = process.hrtime.bigint();
    times.push(Number(b - a) / 1e6);
    if (times.length >= minRuns && b - start > budgetNs) break;
  }
  const y = out.last_hidden_state;
  if (args.outdir) {
    fs.mkdirSync(args.outdir, { recursive: true });
    fs.writeFileSync(path.join(args.outdir, `seq${S}.f32`), Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength));
  }
  const sorted = [...times].sort((p, q) => p - q);
  const mid = (sorted.length - 1) / 2;
  result.seqs[S] = { times_ms: times, median_ms: (sorted[Math.floor(mid)] + sorted[Math.ceil(mid)]) / 2, min_ms: sorted[0] };
}
console.log(JSON.stringify(result));
