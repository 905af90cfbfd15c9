/**
 * `{baseUrl}/v1/{endpoint}` of an OpenAI-compatible server, accepting a base URL that already
 * ends in `/v1`. Returns the reason instead of the URL when the base URL is unusable, so each
 * client can raise its own configuration error.
 */
export function openAiEndpoint(baseUrl: string, endpoint: string): { url: string } | { problem: string } {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return { problem: `baseUrl "${baseUrl}" is not a URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: `baseUrl "${baseUrl}" must be http(s)` };
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith('/v1') ? `${path}/${endpoint}` : `${path}/v1/${endpoint}`;
  return { url: url.toString() };
}
