-- a hook with a syntax error on line 3
function broken(cmd)
  if cmd == then
    return true
  end
end
