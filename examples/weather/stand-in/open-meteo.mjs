#!/usr/bin/env node
// A stand-in for the two Open-Meteo APIs the weather example calls, for tests and work offline:
// `GET /v1/search` (geocoding) and `GET /v1/forecast`, answering with the same JSON shape for the
// requests the example's tools make. Its places are a fixed few and its weather is made up, the
// same for the same place and day, so a test can count on it.
//
//   node examples/weather/stand-in/open-meteo.mjs            # on http://127.0.0.1:8787
//   node examples/weather/stand-in/open-meteo.mjs --port 0   # on a free port (the line it prints says which)
//
// Then point the example at it: see README.md beside this file. Plain Node, no packages.
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

const PLACES = [
  {
    id: 2950159,
    name: 'Berlin',
    latitude: 52.52437,
    longitude: 13.41053,
    country_code: 'DE',
    country: 'Germany',
    timezone: 'Europe/Berlin',
    population: 3426354,
  },
  {
    id: 2925533,
    name: 'Frankfurt am Main',
    latitude: 50.11552,
    longitude: 8.68417,
    country_code: 'DE',
    country: 'Germany',
    timezone: 'Europe/Berlin',
    population: 650000,
  },
  {
    id: 2267057,
    name: 'Lisbon',
    latitude: 38.71667,
    longitude: -9.13333,
    country_code: 'PT',
    country: 'Portugal',
    timezone: 'Europe/Lisbon',
    population: 517802,
  },
  {
    id: 2988507,
    name: 'Paris',
    latitude: 48.85341,
    longitude: 2.3488,
    country_code: 'FR',
    country: 'France',
    timezone: 'Europe/Paris',
    population: 2138551,
  },
  {
    id: 1850147,
    name: 'Tokyo',
    latitude: 35.6895,
    longitude: 139.69171,
    country_code: 'JP',
    country: 'Japan',
    timezone: 'Asia/Tokyo',
    population: 8336599,
  },
  {
    id: 5128581,
    name: 'New York',
    latitude: 40.71427,
    longitude: -74.00597,
    country_code: 'US',
    country: 'United States',
    timezone: 'America/New_York',
    population: 8804190,
  },
];

const UNITS = {
  temperature_2m: '°C',
  temperature_2m_max: '°C',
  temperature_2m_min: '°C',
  relative_humidity_2m: '%',
  wind_speed_10m: 'km/h',
  precipitation_sum: 'mm',
  weather_code: 'wmo code',
};

/** A made-up but steady value for a place and a day: the same question gets the same answer. */
function made(latitude, longitude, day, salt) {
  const x = Math.sin(latitude * 12.9898 + longitude * 78.233 + day * 37.719 + salt) * 43758.5453;
  return x - Math.floor(x);
}

const round = (value) => Math.round(value * 10) / 10;

function temperature(celsius, unit) {
  return round(unit === 'fahrenheit' ? (celsius * 9) / 5 + 32 : celsius);
}

function search(query) {
  const name = (query.get('name') ?? '').trim().toLowerCase();
  const count = Math.min(Math.max(Number(query.get('count') ?? 10) || 10, 1), 100);
  if (name.length < 2)
    return { status: 400, body: { error: true, reason: 'Parameter name must be at least 2 characters' } };
  const results = PLACES.filter((p) => p.name.toLowerCase().startsWith(name)).slice(0, count);
  // the real API leaves `results` out when nothing matches
  return { status: 200, body: { ...(results.length === 0 ? {} : { results }), generationtime_ms: 0.1 } };
}

function forecast(query) {
  const latitude = Number(query.get('latitude'));
  const longitude = Number(query.get('longitude'));
  if (
    !Number.isFinite(latitude) ||
    latitude < -90 ||
    latitude > 90 ||
    !Number.isFinite(longitude) ||
    longitude < -180 ||
    longitude > 180
  ) {
    return {
      status: 400,
      body: {
        error: true,
        reason: 'Latitude must be in range of -90 to 90°. Longitude must be in range of -180 to 180°.',
      },
    };
  }
  const unit = query.get('temperature_unit') ?? 'celsius';
  const units = (names) =>
    Object.fromEntries(
      names.map((n) => [n, n.startsWith('temperature') && unit === 'fahrenheit' ? '°F' : (UNITS[n] ?? '')]),
    );
  const base = 25 - Math.abs(latitude) / 3;
  const body = {
    latitude: round(latitude),
    longitude: round(longitude),
    generationtime_ms: 0.1,
    utc_offset_seconds: 0,
    timezone: 'GMT',
    timezone_abbreviation: 'GMT',
    elevation: 38,
  };
  const today = new Date().toISOString().slice(0, 10);
  const current = (query.get('current') ?? '').split(',').filter(Boolean);
  if (current.length > 0) {
    const value = {
      temperature_2m: temperature(base + made(latitude, longitude, 0, 1) * 8 - 4, unit),
      relative_humidity_2m: Math.round(40 + made(latitude, longitude, 0, 2) * 50),
      wind_speed_10m: round(made(latitude, longitude, 0, 3) * 30),
      weather_code: [0, 1, 2, 3, 61, 80][Math.floor(made(latitude, longitude, 0, 4) * 6)],
    };
    body.current_units = { time: 'iso8601', interval: 'seconds', ...units(current) };
    body.current = {
      time: `${today}T12:00`,
      interval: 900,
      ...Object.fromEntries(current.map((n) => [n, value[n] ?? null])),
    };
  }
  const daily = (query.get('daily') ?? '').split(',').filter(Boolean);
  if (daily.length > 0) {
    const days = Math.min(Math.max(Number(query.get('forecast_days') ?? 7) || 7, 1), 16);
    const time = Array.from({ length: days }, (_, i) =>
      new Date(Date.parse(today) + i * 86_400_000).toISOString().slice(0, 10),
    );
    const column = (name) =>
      time.map((_, day) => {
        const high = base + made(latitude, longitude, day, 5) * 8;
        if (name === 'temperature_2m_max') return temperature(high, unit);
        if (name === 'temperature_2m_min') return temperature(high - 6 - made(latitude, longitude, day, 6) * 6, unit);
        if (name === 'precipitation_sum') return round(Math.max(0, made(latitude, longitude, day, 7) * 12 - 5));
        if (name === 'weather_code') return [0, 1, 2, 3, 61, 80][Math.floor(made(latitude, longitude, day, 8) * 6)];
        return null;
      });
    body.daily_units = { time: 'iso8601', ...units(daily) };
    body.daily = { time, ...Object.fromEntries(daily.map((n) => [n, column(n)])) };
  }
  return { status: 200, body };
}

function answer(req, res) {
  const url = new URL(req.url ?? '/', 'http://stand-in');
  const found =
    req.method !== 'GET'
      ? { status: 405, body: { error: true, reason: 'only GET is answered' } }
      : url.pathname === '/v1/search'
        ? search(url.searchParams)
        : url.pathname === '/v1/forecast'
          ? forecast(url.searchParams)
          : { status: 404, body: { error: true, reason: `no ${url.pathname} here: /v1/search and /v1/forecast are` } };
  res.writeHead(found.status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(found.body));
}

/** Starts the stand-in; resolves with its base URL once it listens. */
export function startStandIn({ port = 8787, host = '127.0.0.1' } = {}) {
  const server = createServer(answer);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve({ url: `http://${host}:${address.port}`, close: () => new Promise((done) => server.close(done)) });
    });
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const at = process.argv.indexOf('--port');
  const port = at === -1 ? Number(process.env.PORT ?? 8787) : Number(process.argv[at + 1]);
  startStandIn({ port }).then(
    ({ url }) => console.log(`Open-Meteo stand-in listening on ${url}`),
    (error) => {
      console.error(`the stand-in could not listen on port ${port}: ${error.message}`);
      process.exitCode = 1;
    },
  );
}
