import { lastUserOf, systemOf, type ChatRequest } from './fake-openai-server.ts';

export interface FakeResearchModelOptions {
  /** The first planning reply is prose instead of JSON (to exercise retries). */
  malformedPlanFirst?: boolean;
  /** The analysis never says done, so research runs until its limits. */
  keepGoing?: boolean;
}

/**
 * Replies of a model to the research workflow's LLM analyst, recognized by each call's system
 * prompt, over the tidal-power fixture corpus: deterministic, so reports can be compared.
 */
export function fakeResearchModel(options: FakeResearchModelOptions = {}): (request: ChatRequest) => string {
  let planCalls = 0;
  let analyses = 0;
  return (request) => {
    const system = systemOf(request);
    const user = lastUserOf(request);
    if (system.includes('You name research sessions')) return 'Tidal Power Explained';
    if (system.includes('You plan searches')) {
      planCalls += 1;
      if (options.malformedPlanFirst && planCalls === 1) return 'Sure! Here are some ideas: tides, barrages.';
      return JSON.stringify({ queries: ['tidal barrage electricity', 'La Rance tidal station'] });
    }
    if (system.includes('You extract facts')) {
      const quote = /La Rance station in France, opened in 1966, was the first large tidal barrage\./.exec(user)?.[0];
      return JSON.stringify({ notes: quote ? [{ quote, note: 'La Rance in France (1966) was the first large tidal barrage.' }] : [] });
    }
    if (system.includes('You judge coverage')) {
      analyses += 1;
      return JSON.stringify(options.keepGoing ? { done: false, reason: 'gaps remain', nextQueries: [`tidal stream turbines ${analyses}`] } : { done: true, reason: 'covered', nextQueries: [] });
    }
    if (system.includes('You structure reports')) {
      const ids = [...user.matchAll(/\[(r\d+\/(?:follow-up\/)?iteration-\d+-\d+-\d+)\]/g)].map((match) => match[1]);
      return JSON.stringify({ title: 'Tidal power', sections: [{ title: 'Barrages', focus: 'How barrages work', noteIds: ids }] });
    }
    if (system.includes('You decide whether more research')) return JSON.stringify({ action: 'answer', reason: 'the notes cover it' });
    if (system.includes('You answer follow-up')) return 'La Rance opened in 1966 [1].';
    if (system.includes('You write one section')) return 'The La Rance station in France opened in 1966 as the first large tidal barrage [1].';
    throw new Error(`unplanned request: ${system.slice(0, 80)}`);
  };
}
