-- time_window.lua - ("ask", why) outside working hours, false inside them.
-- Working hours are the constants below, in the local time of the process that
-- evaluates the command (its TZ); edit them in a copy of this file to change them.
--
--   hooks "std/time_window"
--   allow program in tools and lua "time_window"   -- asks at night and at weekends

local START_HOUR = 8        -- first working hour (08:00)
local END_HOUR = 19         -- working hours end at 19:00
local WORKDAYS = { [2] = true, [3] = true, [4] = true, [5] = true, [6] = true } -- Mon..Fri (wday 1 = Sunday)

local DAYS = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" }

-- The decision for a localtime() table; separate so tests can pass any time.
function time_window_at(t)
  if WORKDAYS[t.wday] and t.hour >= START_HOUR and t.hour < END_HOUR then
    return false
  end
  return "ask", string.format("outside working hours (%s %02d:%02d; allowed Mon-Fri %02d:00-%02d:00)",
                              DAYS[t.wday], t.hour, t.min, START_HOUR, END_HOUR)
end

function time_window(seg)
  return time_window_at(localtime())
end
