// A real OpenID provider for `sso_replicas.rs`: the browser tests' `oidc-provider` (the npm
// package, OpenID-certified; tests/e2e/oidc.mjs), started on loopback for the portal at the
// address given, with one client whose secret is given and the accounts given as JSON. It writes
// `issuer <URL>` on a line of its own once it serves, and stops when its standard input closes.
//
// node oidc_provider.mjs PORTAL_URL CLIENT_SECRET ACCOUNTS_JSON
import { startProvider } from '../../../../../tests/e2e/oidc.mjs';

const [portalUrl, clientSecret, accounts] = process.argv.slice(2);
const provider = await startProvider({ portalUrl, clientSecret, accounts: JSON.parse(accounts) });
process.stdout.write(`issuer ${provider.issuer}\n`);
process.stdin.on('end', () => {
  provider.stop();
  process.exit(0);
});
process.stdin.resume();
