" WSP programs (*.wsp) get filetype `wsp`: Neovim knows no such extension itself.
autocmd BufRead,BufNewFile *.wsp setfiletype wsp
