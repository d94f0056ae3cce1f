/**
 * The operator's brand (docs/pages.md "Your brand"): BRAND_* settings, the accent
 * made readable in both themes, the branded page templates and stylesheet,
 * and the e-mails naming the brand and its support link (over a real SMTP
 * server on loopback).
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/platform/config.js';
import { contrast, fillAccent, MIN_CONTRAST, themeAccent } from '../src/platform/colour.js';
import { applyBrand, brandCss } from '../src/platform/http/brand.js';
import { testApp } from './support/app.js';
import { inlineParts } from './support/inline-page.js';
import { useSmtpServer } from './support/auth-harness.js';

const LOGO = 'data:image/png;base64,iVBORw0KGgo=';

describe('BRAND_* settings', () => {
  it('are all optional, and normalise the accent', () => {
    expect(loadConfig({}).brand).toEqual({ name: undefined, logoUrl: undefined, accent: undefined, supportUrl: undefined });
    expect(
      loadConfig({
        BRAND_NAME: ' Acme ID ',
        BRAND_ACCENT: '#FC0',
        BRAND_LOGO_URL: '/static/logo.svg',
        BRAND_SUPPORT_URL: 'https://acme.example/help',
      }).brand,
    ).toEqual({
      name: 'Acme ID',
      accent: '#ffcc00',
      logoUrl: '/static/logo.svg',
      supportUrl: 'https://acme.example/help',
    });
  });

  it.each([
    ['BRAND_NAME', 'x'.repeat(65)],
    ['BRAND_NAME', 'Acme\u202eDI'],
    ['BRAND_ACCENT', 'orange'],
    ['BRAND_ACCENT', '#12345'],
    ['BRAND_LOGO_URL', 'https://cdn.example/logo.png'],
    ['BRAND_LOGO_URL', '//cdn.example/logo.png'],
    ['BRAND_LOGO_URL', 'data:text/html,<script>'],
    ['BRAND_LOGO_URL', `data:image/png;base64,${'A'.repeat(70_000)}`],
    ['BRAND_SUPPORT_URL', 'javascript:alert(1)'],
    ['BRAND_SUPPORT_URL', 'http://acme.example/help'],
  ])('%s=%s stops the start naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});

describe('the accent', () => {
  it.each(['#ffcc00', '#00ff00', '#0000ff', '#777777', '#ffffff', '#000000', '#a94300', '#ff69b4'])(
    '%s reads at 4.5:1 or better in both themes',
    (wanted) => {
      const backgrounds = { light: ['#f6f5f2', '#ffffff', '#fff7ed'], dark: ['#161514', '#22201e', '#33261a'] } as const;
      for (const theme of ['light', 'dark'] as const) {
        const { accent, text } = themeAccent(wanted, theme);
        for (const background of backgrounds[theme])
          expect(contrast(accent, background), `${theme} on ${background}`).toBeGreaterThanOrEqual(MIN_CONTRAST);
        expect(contrast(accent, text), `${theme} text`).toBeGreaterThanOrEqual(MIN_CONTRAST);
      }
    },
  );

  it.each(['#ffcc00', '#00ff00', '#0000ff', '#777777', '#ffffff', '#000000', '#a94300', '#ff69b4'])(
    "%s as the mails' fill has text on it at 4.5:1 or better, and keeps its colour when some text reaches that",
    (wanted) => {
      const { fill, hover, text } = fillAccent(wanted);
      expect(contrast(fill, text)).toBeGreaterThanOrEqual(MIN_CONTRAST);
      expect(contrast(hover, text)).toBeGreaterThanOrEqual(contrast(fill, text));
      if (Math.max(contrast(wanted, '#ffffff'), contrast(wanted, '#1c1b19')) >= MIN_CONTRAST) expect(fill).toBe(wanted);
    },
  );

  it('keeps a light accent as a fill with dark text, where links in the light theme need it darker', () => {
    expect(fillAccent('#ffcc00')).toMatchObject({ fill: '#ffcc00', text: '#1c1b19' });
    expect(themeAccent('#ffcc00', 'light').accent).not.toBe('#ffcc00');
  });

  it('keeps a colour that already reads well', () => {
    expect(themeAccent('#a94300', 'light').accent).toBe('#a94300');
    expect(brandCss({ name: undefined, logoUrl: undefined, accent: undefined, supportUrl: undefined })).toMatch(/^\/\*/);
    expect(brandCss({ name: undefined, logoUrl: undefined, accent: '#a94300', supportUrl: undefined })).toContain('--accent: #a94300;');
  });
});

describe('branded pages', () => {
  it("take the logo as their icon, and the service's own without one", () => {
    const none = { name: undefined, logoUrl: undefined, accent: undefined, supportUrl: undefined };
    expect(applyBrand('<!--favicon-->', none)).toBe('<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">');
    expect(applyBrand('<!--favicon-->', { ...none, logoUrl: '/brand/logo.png?v="1"' })).toBe(
      '<link rel="icon" href="/brand/logo.png?v=&#34;1&#34;">',
    );
    expect(applyBrand('<!--favicon-->', { ...none, logoUrl: LOGO })).toMatch(
      /^<link rel="icon" href="data:image\/[a-z+]+[;,][^"]*" type="image\/[a-z+]+">$/,
    );
  });

  it('fill the header, titles and footer, escaping what they show', () => {
    const brand = { name: 'Acme <ID> {{x}}', logoUrl: LOGO, accent: undefined, supportUrl: 'mailto:help@acme.example' };
    const page = applyBrand(
      '<title>Sign in · <!--brand-name--></title><body data-brand="<!--brand-name-->"><!--brand--><!--support-line-->',
      brand,
    );
    expect(page).toContain('<title>Sign in · Acme &#60;ID&#62; &#123;&#123;x&#125;&#125;</title>');
    expect(page).toContain(
      `<a class="brand has-logo" href="/account"><img class="brand-logo" src="${LOGO}" alt="" width="28" height="28">Acme &#60;ID&#62;`,
    );
    expect(page).toContain(
      '<p class="support">Need help? <a href="mailto:help@acme.example" rel="noopener">Contact Acme &#60;ID&#62; &#123;&#123;x&#125;&#125; support</a>.</p>',
    );
    expect(applyBrand('<!--support-line-->', brand, 'de')).toBe(
      '<p class="support">Brauchen Sie Hilfe? <a href="mailto:help@acme.example" rel="noopener">Support von Acme &#60;ID&#62; &#123;&#123;x&#125;&#125; kontaktieren</a>.</p>',
    );
    const plain = applyBrand('<!--brand--><!--support-line-->', {
      name: undefined,
      logoUrl: undefined,
      accent: undefined,
      supportUrl: undefined,
    });
    expect(plain).toBe('<a class="brand" href="/account">oc-host</a>');
  });

  it('are served with brand.css by the app', async () => {
    const app = await testApp({ BRAND_NAME: 'Acme ID', BRAND_ACCENT: '#ffcc00' });
    try {
      const signin = await app.inject({ method: 'GET', url: '/signin' });
      expect(signin.body).toContain('<title>Sign in · Acme ID</title>');
      // The page carries the brand's styles inline; the stylesheet is also served for a linked page (the explorer).
      expect(inlineParts(signin.body).style).toContain(`--accent: ${themeAccent('#ffcc00', 'light').accent};`);
      expect((await app.inject({ method: 'GET', url: '/api-explorer' })).body).toMatch(/href="\/assets\/brand\.[0-9a-f]{16}\.css"/);
      const css = await app.inject({ method: 'GET', url: '/assets/brand.css' });
      expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
      expect(css.body).toContain(`--accent: ${themeAccent('#ffcc00', 'light').accent};`);
      expect(
        (await app.inject({ method: 'GET', url: '/assets/brand.css', headers: { 'if-none-match': css.headers.etag as string } }))
          .statusCode,
      ).toBe(304);
    } finally {
      await app.close();
    }
  });
});

describe('branded e-mails', () => {
  const smtp = useSmtpServer();

  it('name the brand and link its support, and send as the brand when MAIL_FROM names no sender; without a brand they name the host', async () => {
    for (const [env, subject, support, from] of [
      [
        { BRAND_NAME: 'Acme ID', BRAND_SUPPORT_URL: 'mailto:help@acme.example', BRAND_ACCENT: '#ffcc00' },
        / is your sign-in code for Acme ID$/,
        'Need help? Contact Acme ID support: help@acme.example',
        'Acme ID <no-reply@localhost>',
      ],
      [
        { BRAND_NAME: 'Acme "ID"', MAIL_FROM: 'auth@acme.example' },
        / is your sign-in code for Acme "ID"$/,
        undefined,
        '"Acme \\"ID\\"" <auth@acme.example>',
      ],
      [
        { BRAND_NAME: 'Acme ID', MAIL_FROM: 'Acme Sign-in <auth@acme.example>' },
        / is your sign-in code for Acme ID$/,
        undefined,
        '"Acme Sign-in" <auth@acme.example>',
      ],
      [{}, / is your sign-in code for localhost:8787$/, undefined, '"oc-host" <no-reply@localhost>'],
    ] as const) {
      const app = await testApp({ SMTP_URL: smtp.url, RATE_LIMIT_OTP_PER_HOUR: '0', ...env });
      try {
        const email = `brand-${Object.values(env).join('').length}@example.org`;
        const started = await app.inject({
          method: 'POST',
          url: '/api/auth/email-otp/start',
          headers: { origin: 'http://localhost:8787' },
          payload: { email },
        });
        expect(started.statusCode).toBe(200);
        const mail = await smtp.waitForMessage((received) => received.envelope.to.includes(email));
        expect(mail.subject).toMatch(subject);
        expect(mail.header('From')).toBe(from);
        // The HTML part's header is the brand's name on its colour (the pages' accent without one).
        const name = env.BRAND_NAME?.replaceAll('"', '&quot;') ?? 'localhost:8787';
        const fill = 'BRAND_ACCENT' in env ? 'background: #ffcc00; color: #1c1b19;' : 'background: #a94300; color: #ffffff;';
        expect(mail.html).toMatch(new RegExp(`<td style="${fill}[^"]*">${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}</td>`));
        if (support === undefined) expect(mail.text).not.toContain('Need help?');
        else expect(mail.text).toContain(support);
      } finally {
        await app.close();
      }
    }
  });
});
