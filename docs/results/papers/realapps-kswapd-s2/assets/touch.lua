-- A return to a Redis app of the realapps scenario (redis-cli --eval touch.lua , VISIT):
-- read the hot head (the first 5 % of keys) and a window of 4 % that starts where the visit
-- number says, as a client of the database would on a user's return. Returns bytes read.
local visit = tonumber(ARGV[1]) or 0
local n = tonumber(redis.call('GET', 'meta:n'))
local hot = math.max(1, math.floor(n / 20))
local window = math.max(1, math.floor(n / 25))
local acc = 0
for i = 0, hot - 1 do
  local v = redis.call('GET', 'r:' .. i)
  if v then acc = acc + #v end
end
local start = (visit * 7919 + 13) % n
for i = 0, window - 1 do
  local v = redis.call('GET', 'r:' .. ((start + i) % n))
  if v then acc = acc + #v end
end
return acc
