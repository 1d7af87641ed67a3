// SPDX-License-Identifier: Apache-2.0
// Token ids of the family text cases under HF's tokenizers library (the reference), for the
// tokenizer.json files of family_tokenizers.py. usage (NODE_PATH at a node_modules holding
// @anush008/tokenizers@0.6.0):
//   node family_tokenizer_ids.mjs DIR_WITH_KIND.json... > family_tokenizer_ids.json
// Prints {"KIND": {"text": {ids, type_ids, offsets}, "text_pair": {...}}} (offsets: [begin, end)
// in characters of each input, as the library reports them).
import { createRequire } from 'node:module';
import path from 'node:path';
const require = createRequire(import.meta.url);
const { Tokenizer } = require('@anush008/tokenizers');

const TEXT = 'The movie was REALLY good, and the acting was great!';
const TEXT_A = 'Who was rude?', TEXT_B = 'The Hotel was clean, but the staff was RUDE.';
const out = {};
for (const file of process.argv.slice(2)) {
  const t = Tokenizer.fromFile(file);
  const enc = async (a, b) => {
    const e = await t.encode(a, b, { addSpecialTokens: true });
    return { ids: e.getIds(), type_ids: e.getTypeIds(), offsets: e.getOffsets() };
  };
  out[path.basename(file, '.json')] = { text: await enc(TEXT, null), text_pair: await enc(TEXT_A, TEXT_B) };
}
console.log(JSON.stringify(out, null, 1));
