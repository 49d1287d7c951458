extern "C" void wsp_kernel_shard_matmul(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  uint16_t* const p_x = (uint16_t*)wsp_t[0]; const int64_t p_x_rs = wsp_s[0], p_x_cs = wsp_s[1];
  uint16_t* const p_w = (uint16_t*)wsp_t[1]; const int64_t p_w_rs = wsp_s[2], p_w_cs = wsp_s[3];
  float* const p_out = (float*)wsp_t[2]; const int64_t p_out_rs = wsp_s[4], p_out_cs = wsp_s[5];
  float v_x[8192]; wsp::load<64, 128, wsp::F16>(v_x, p_x, p_x_rs, p_x_cs);
  float v_w[16384]; wsp::load<128, 128, wsp::F16>(v_w, p_w, p_w_rs, p_w_cs);
  // %0 = matmul
  float v0[8192]; wsp::matmul<float, 64, 128, 128>(v_x, v_w, nullptr, v0);
  // %1 = store
  wsp::store<64, 128, wsp::Plain<float>>(p_out, p_out_rs, p_out_cs, v0);
}
