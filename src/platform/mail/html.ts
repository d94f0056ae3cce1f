/**
 * HTML escaping for the HTML part of outgoing mail. Everything that came from
 * a user (a contact message, a name) or from configuration goes through it, so
 * a message cannot add markup, links or scripts to the mail we send.
 */
const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes the five characters that are special in HTML text and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character] ?? character);
}
