// Prints each line of a policy file with the scopes the grammar gives its
// tokens, as VS Code's TextMate engine does: [text|scope ...].
//
//   npm install && npm run tokenize
'use strict';

const fs = require('fs');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');
const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;
const onigLib = oniguruma.loadWASM(wasm).then(() => ({
  createOnigScanner(p) { return new oniguruma.OnigScanner(p); },
  createOnigString(s) { return new oniguruma.OnigString(s); },
}));
const grammarPath = process.argv[2], file = process.argv[3];
const registry = new vsctm.Registry({
  onigLib,
  loadGrammar: async (scope) => vsctm.parseRawGrammar(fs.readFileSync(grammarPath, 'utf8'), grammarPath),
});
registry.loadGrammar('source.policy').then(g => {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  let rs = vsctm.INITIAL;
  for (const line of lines) {
    const r = g.tokenizeLine(line, rs);
    const parts = r.tokens.map(t => {
      const text = line.substring(t.startIndex, t.endIndex);
      const sc = t.scopes.filter(s => s !== 'source.policy').map(s => s.replace(/\.policy$/, '')).join(' ');
      return sc ? `[${text}|${sc}]` : text;
    });
    console.log(parts.join(''));
    rs = r.ruleStack;
  }
}).catch(e => { console.error(e); process.exit(1); });
