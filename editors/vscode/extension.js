// The policyrun extension: the policy language's grammar (package.json
// contributes it) and a client of the language server `policyrun lsp`,
// which gives diagnostics, hover, completion, formatting and go to
// definition (docs/lsp.md).
'use strict';

const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration('policyrun').get('path') || 'policyrun';
  // The server speaks LSP over its standard input and output.
  const serverOptions = { command, args: ['lsp'] };
  const clientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'policy' },
      { scheme: 'untitled', language: 'policy' },
    ],
  };
  client = new LanguageClient('policyrun', 'policyrun lsp', serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.commands.registerCommand('policyrun.restartServer', () => client.restart()),
  );
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
