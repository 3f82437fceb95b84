/** `quarry/langgraph`: Quarry's store as a LangGraph.js checkpoint saver. */
export { QuarrySaver } from './quarry-saver.ts';
