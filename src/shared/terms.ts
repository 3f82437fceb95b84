/** Words that carry no topic, left out of queries and term matching. */
export const stopWords = new Set(
  'a an and are as at be but by for from has have how in into is it its of on or that the their this to was were what when where which who why will with do does did can could should would about than then them they there these those been being not no also such other more most some any each many much very just only into over under per via one two'.split(' '),
);

/** Lower-case words of a query, without stop words or duplicates; at most 32. */
export function queryTerms(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words.filter((word) => !stopWords.has(word) && word.length > 1))].slice(0, 32);
}

/** Every term occurrence (not deduplicated), for frequency counts. */
export function termList(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => !stopWords.has(word) && word.length > 1);
}
