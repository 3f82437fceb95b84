import type { ChildNode, Element } from 'domhandler';

/**
 * OpenDocument (`.odt`, `.odp`) and PowerPoint (`.pptx`) XML as the HTML the corpus already reads:
 * headings with their level, paragraphs, lists, tables; a presentation's slides in order, each a
 * section under its number. Parsed as XML without its DTD, so no entity expands.
 */

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[char]!);
}

async function parseXml(xml: string) {
  const { parseDocument } = await import('htmlparser2');
  return parseDocument(xml, { xmlMode: true, decodeEntities: true });
}

const isElement = (node: ChildNode): node is Element => node.type === 'tag';

/** OpenDocument text: spaces (`text:s`), tabs and line breaks as the text means them. */
function odfText(node: ChildNode): string {
  if (node.type === 'text') return node.data;
  if (!isElement(node)) return '';
  if (node.name === 'text:s') return ' '.repeat(Number(node.attribs['text:c'] ?? 1));
  if (node.name === 'text:tab') return '\t';
  if (node.name === 'text:line-break') return '\n';
  if (node.name === 'text:note') return '';
  return node.children.map(odfText).join('');
}

function odfHtml(node: ChildNode): string {
  if (!isElement(node)) return '';
  const inner = () => node.children.map(odfHtml).join('');
  switch (node.name) {
    case 'text:h': {
      const level = Math.min(6, Math.max(1, Number(node.attribs['text:outline-level'] ?? 1)));
      return `<h${level}>${escapeHtml(odfText(node))}</h${level}>`;
    }
    case 'text:p':
      return `<p>${escapeHtml(odfText(node))}</p>`;
    case 'text:list':
      return `<ul>${inner()}</ul>`;
    case 'text:list-item':
      return `<li>${inner()}</li>`;
    case 'table:table':
      return `<table>${inner()}</table>`;
    case 'table:table-row':
      return `<tr>${inner()}</tr>`;
    case 'table:table-cell':
      return `<td>${inner()}</td>`;
    case 'draw:page':
      return `<section><h2>${escapeHtml(node.attribs['draw:name'] ?? 'Slide')}</h2>${inner()}</section>`;
    default:
      return inner();
  }
}

/** An OpenDocument file's `content.xml` as HTML. */
export async function openDocumentHtml(contentXml: string): Promise<string> {
  const document = await parseXml(contentXml);
  return document.children.map(odfHtml).join('');
}

/** A slide's paragraphs (`a:p` of `a:t` runs) as HTML, under the slide's number. */
export async function slideHtml(slideXml: string, number: number): Promise<string> {
  const document = await parseXml(slideXml);
  const paragraphs: string[] = [];
  const walk = (node: ChildNode) => {
    if (!isElement(node)) return;
    if (node.name === 'a:p') {
      const runs: string[] = [];
      const text = (child: ChildNode): void => {
        if (!isElement(child)) return;
        if (child.name === 'a:t')
          runs.push(child.children.map((each) => (each.type === 'text' ? each.data : '')).join(''));
        else if (child.name === 'a:br') runs.push('\n');
        else child.children.forEach(text);
      };
      node.children.forEach(text);
      const line = runs.join('').trim();
      if (line) paragraphs.push(`<p>${escapeHtml(line)}</p>`);
      return;
    }
    node.children.forEach(walk);
  };
  document.children.forEach(walk);
  return `<section><h2>Slide ${number}</h2>${paragraphs.join('')}</section>`;
}
