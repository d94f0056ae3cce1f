/**
 * The weight of a first visit (docs/performance.md "Page weight"): /signin,
 * /account (signed in) and the console at /admin (an operator), in each language, in headless Chromium with an
 * empty cache, at most {@link MAX_BYTES} on the wire and {@link MAX_REQUESTS}
 * requests, all named by the HTML itself, so they are fetched in one
 * parallel wave after it; a repeat visit asks for the HTML only. Counted:
 * what the page loads to be shown and run (document, styles, scripts,
 * images), not the API calls its scripts make. Nothing here is timed: how
 * fast the pages get usable on a slow network is `npm run bench -- pages`.
 * The budgets hold whatever a page's markup is: the test reads only the
 * network and the ready mark.
 */
import { describe, expect, it } from 'vitest';
import { LOCALES } from '../src/platform/i18n/index.js';
import { newWallet } from './support/auth-client.js';
import { CHROMIUM_PATH, DESKTOP, HAVE_CHROMIUM, IN_CI, pageContext } from './support/chromium.js';
import { loadPage, pageWeight } from './support/page-load.js';
import { usePageHost } from './support/page-host.js';

const MAX_BYTES = 60 * 1024;
const MAX_REQUESTS = 8;

if (!HAVE_CHROMIUM && IN_CI) {
  it('has Chromium to drive (CI=true)', () => {
    throw new Error(`page-budget: ${CHROMIUM_PATH} is missing and CI=true; run scripts/ensure-chromium.sh before the tests`);
  });
}

describe.skipIf(!HAVE_CHROMIUM)('page budgets in headless Chromium', () => {
  const site = usePageHost();

  it.each(['/signin', '/account', '/admin'])(
    '%s: a first visit within budget in one wave after the HTML, a repeat visit the HTML alone',
    async (path) => {
      for (const locale of LOCALES) {
        let cookie: string | undefined;
        if (path !== '/signin') {
          const host = site.harness.browser(site.app, site.base);
          const signedIn = await host.signIn(newWallet());
          expect(signedIn.status).toBe(200);
          cookie = host.cookie as string;
          if (path === '/admin')
            await site.harness.store.addOperator({
              account_id: signedIn.body.account.did_oc.slice('did:oc:'.length),
              added_at: Date.now(),
              added_by: 'cli',
            });
        }
        const context = await pageContext(site.browser, site.base, locale, DESKTOP, cookie);
        try {
          const page = await context.newPage();
          const errors: string[] = [];
          page.on('pageerror', (error) => errors.push(error.message));
          const first = pageWeight(await loadPage(page, path));
          const what = `${path} in ${locale}: ${first.urls.join(' ')}`;
          expect(first.bytes, what).toBeLessThanOrEqual(MAX_BYTES);
          expect(first.requests, what).toBeLessThanOrEqual(MAX_REQUESTS);
          expect(first.depth, what).toBe(1);
          expect(first.urls[0], what).toBe(`${site.base}${path}`);

          const again = pageWeight(await loadPage(page, path));
          expect(again.urls, `${path} in ${locale}, again`).toEqual([`${site.base}${path}`]);
          expect(errors, `${path} in ${locale}`).toEqual([]);
          process.stdout.write(
            `page-budget: ${path} ${locale}: ${first.requests} requests (${first.urls.map((url) => new URL(url).pathname).join(' ')}), ${first.bytes} bytes; again ${again.bytes} bytes\n`,
          );
        } finally {
          await context.close();
        }
      }
    },
  );
});
