// The Heads tab's names of the engine's detector scores, in the page's language: a key the engine
// returns that the tables do not name (a score a model adds) is shown as the engine spells it.
import { t, type Key } from '../i18n';
import { en } from '../i18n/en';

export function scoreName(key: string): string {
  const k = `heads.score.${key}`;
  return k in en ? t(k as Key) : key.replace(/_/g, ' ');
}
