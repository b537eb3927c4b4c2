// A real OpenID provider for the single sign-on browser tests: the npm `oidc-provider` package
// (OpenID-certified; not written here), started in this process on a loopback address, with its
// development sign-in pages (any password is taken) and RP-initiated logout.
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

/**
 * Starts a provider on `host` (a loopback address) with one client, the portal at `portalUrl`,
 * whose secret is `clientSecret`; `accounts` maps a login to the claims the provider tells about
 * them. Resolves to { issuer, stop }.
 */
export async function startProvider({ host = '127.0.0.1', portalUrl, clientSecret, accounts }) {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, host, resolve));
  const issuer = `http://${host}:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: 'portal',
      client_secret: clientSecret,
      redirect_uris: [`${portalUrl}/sso/callback`],
      post_logout_redirect_uris: [`${portalUrl}/`],
    }],
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: {
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
      groups: ['groups'],
    },
    findAccount: (ctx, id) => (accounts[id]
      ? { accountId: id, claims: async () => ({ sub: id, preferred_username: id, ...accounts[id] }) }
      : undefined),
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    cookies: { keys: ['portal-e2e-provider-cookies'] },
  });
  server.on('request', provider.callback());
  return { issuer, stop: () => server.close() };
}
