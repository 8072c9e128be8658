-- User commands for the Storefront client (Neovim 0.7+).
if vim.g.loaded_storefront then
  return
end
vim.g.loaded_storefront = true

local function command(name, fn, opts)
  vim.api.nvim_create_user_command(name, fn, opts or {})
end

command('StorefrontCatalog', function()
  require('storefront').catalog()
end, { desc = 'Show the catalog' })
command('StorefrontSearch', function(o)
  require('storefront').search(o.args)
end, { nargs = '*', desc = 'Search the catalog' })
command('StorefrontOpen', function(o)
  require('storefront').open_product(o.args)
end, { nargs = '?', desc = 'Open a product (the one under the cursor without an argument)' })
command('StorefrontAddToCart', function(o)
  require('storefront').add_to_cart(o.args)
end, { nargs = '?', desc = 'Add the open product (or the one under the cursor) to the cart' })
command('StorefrontCart', function()
  require('storefront').cart()
end, { desc = 'Show the cart' })
command('StorefrontCheckout', function()
  require('storefront').checkout()
end, { desc = 'Check the cart out' })
command('StorefrontDashboard', function()
  require('storefront').dashboard()
end, { desc = 'Show the dashboard' })
command('StorefrontRefresh', function(o)
  require('storefront').refresh(o.args)
end, { nargs = '?', desc = "Load the current buffer's ViewModel again (the retry after a failure)" })
command('StorefrontDismissNotices', function()
  require('storefront').dismiss_notices()
end, { desc = "Dismiss the cart's notices" })
command('StorefrontInbox', function()
  require('storefront').inbox()
end, { desc = "The account's notifications (* unread)" })
command('StorefrontMarkRead', function(o)
  require('storefront').mark_read(o.args)
end, { nargs = '?', desc = 'Mark a notification read (the one under the cursor without an argument)' })
command('StorefrontMarkAllRead', function()
  require('storefront').mark_all_read()
end, { desc = 'Mark every notification read' })
command('StorefrontLogin', function(o)
  require('storefront').login(o.args)
end, { nargs = 1, desc = 'Sign in (the password is asked with echo off)' })
command('StorefrontRegister', function(o)
  require('storefront').register(o.args)
end, { nargs = 1, desc = 'Sign up (the password is asked twice with echo off)' })
command('StorefrontLogout', function()
  require('storefront').logout()
end, { desc = 'Sign out (everywhere this session is signed in)' })
command('StorefrontWhoami', function()
  require('storefront').client()
  vim.notify('storefront: ' .. require('storefront').whoami())
end, { desc = 'Who this session is' })
command('StorefrontStop', function()
  require('storefront').stop()
end, { desc = 'Stop the server' })

vim.api.nvim_create_autocmd('VimLeavePre', {
  group = vim.api.nvim_create_augroup('storefront', { clear = true }),
  callback = function()
    if package.loaded['storefront'] then
      require('storefront').stop()
    end
  end,
})
