/**
 * Colours the brand accent takes (docs/pages.md "Your brand"): WCAG 2.x contrast,
 * as axe measures it, and the accent as each theme of the pages uses it and
 * as a fill in the mails.
 *
 * An accent is a wish, not a promise: it must stay readable. For each theme
 * of the pages it is darkened (light) or lightened (dark) in small steps
 * until links in that colour reach a 4.5:1 contrast on every background they
 * sit on, and the text on accent buttons is whichever of near-white or
 * near-black reads better.
 */
type Rgb = readonly [number, number, number];

const LIGHT_BACKGROUNDS = ['#f6f5f2', '#ffffff', '#fff7ed'];
const DARK_BACKGROUNDS = ['#161514', '#22201e', '#33261a'];
const LIGHT_TEXT = '#ffffff';
const DARK_TEXT = '#1c1b19';
export const MIN_CONTRAST = 4.5;

function rgbOf(hex: string): Rgb {
  return [1, 3, 5].map((start) => Number.parseInt(hex.slice(start, start + 2), 16)) as unknown as Rgb;
}

function hexOf(rgb: Rgb): string {
  return `#${rgb
    .map((channel) =>
      Math.round(Math.min(255, Math.max(0, channel)))
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;
}

function luminance(hex: string): number {
  const [r, g, b] = rgbOf(hex).map((channel) => {
    const value = channel / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  }) as unknown as Rgb;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2.x contrast ratio of two `#rrggbb` colours, 1 to 21. */
export function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

function mix(hex: string, toward: string, amount: number): string {
  const from = rgbOf(hex);
  const to = rgbOf(toward);
  return hexOf([0, 1, 2].map((index) => from[index]! + (to[index]! - from[index]!) * amount) as unknown as Rgb);
}

export interface ThemeAccent {
  readonly accent: string;
  readonly hover: string;
  readonly text: string;
}

/** The accent as one theme uses it: readable on its backgrounds, with readable text on it. */
export function themeAccent(wanted: string, theme: 'light' | 'dark'): ThemeAccent {
  const backgrounds = theme === 'light' ? LIGHT_BACKGROUNDS : DARK_BACKGROUNDS;
  const toward = theme === 'light' ? '#000000' : '#ffffff';
  const readable = (color: string) =>
    backgrounds.every((background) => contrast(color, background) >= MIN_CONTRAST) &&
    Math.max(contrast(color, LIGHT_TEXT), contrast(color, DARK_TEXT)) >= MIN_CONTRAST;
  let accent = wanted;
  for (let step = 1; step <= 20 && !readable(accent); step += 1) accent = mix(wanted, toward, step * 0.05);
  const text = contrast(accent, LIGHT_TEXT) >= contrast(accent, DARK_TEXT) ? LIGHT_TEXT : DARK_TEXT;
  return { accent, hover: mix(accent, toward, 0.15), text };
}

/**
 * The accent as a fill with text on it (the pages' filled buttons, the
 * mails' header): the colour as
 * asked whenever near-white or near-black text on it reaches 4.5:1, so a
 * light accent keeps its colour with dark text; else the light theme's.
 */
export function fillAccent(wanted: string): { readonly fill: string; readonly hover: string; readonly text: string } {
  const light = contrast(wanted, LIGHT_TEXT);
  const dark = contrast(wanted, DARK_TEXT);
  const fill = Math.max(light, dark) >= MIN_CONTRAST ? wanted : themeAccent(wanted, 'light').accent;
  const text = contrast(fill, LIGHT_TEXT) >= contrast(fill, DARK_TEXT) ? LIGHT_TEXT : DARK_TEXT;
  // Hovering moves away from the text's colour, so the text only gains contrast.
  return { fill, hover: mix(fill, text === LIGHT_TEXT ? '#000000' : '#ffffff', 0.15), text };
}
