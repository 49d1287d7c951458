extern "C" void wsp_kernel_expert_ffn(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  uint16_t* const p_x = (uint16_t*)wsp_t[0]; const int64_t p_x_rs = wsp_s[0], p_x_cs = wsp_s[1];
  uint16_t* const p_w_up = (uint16_t*)wsp_t[1]; const int64_t p_w_up_rs = wsp_s[2], p_w_up_cs = wsp_s[3];
  uint16_t* const p_w_down = (uint16_t*)wsp_t[2]; const int64_t p_w_down_rs = wsp_s[4], p_w_down_cs = wsp_s[5];
  float* const p_out = (float*)wsp_t[3]; const int64_t p_out_rs = wsp_s[6], p_out_cs = wsp_s[7];
  float v_x[4096]; wsp::load<32, 128, wsp::F16>(v_x, p_x, p_x_rs, p_x_cs);
  float v_w_up[32768]; wsp::load<128, 256, wsp::F16>(v_w_up, p_w_up, p_w_up_rs, p_w_up_cs);
  // %0 = matmul
  float v0[8192]; wsp::matmul<float, 32, 256, 128>(v_x, v_w_up, nullptr, v0);
  // %1 = silu
  float v1[8192];
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 256; ++j) { const float x = v0[i * 256 + j]; v1[i * 256 + j] = (float)(x / (1 + wsp::exp(-x))); }
  // %2 = cast
  float v2[8192]; for (int k = 0; k < 8192; ++k) v2[k] = wsp::F16::round((float)v1[k]);
  float v_w_down[32768]; wsp::load<256, 128, wsp::F16>(v_w_down, p_w_down, p_w_down_rs, p_w_down_cs);
  // %3 = matmul
  float v3[4096]; wsp::matmul<float, 32, 128, 256>(v2, v_w_down, nullptr, v3);
  // %4 = store
  wsp::store<32, 128, wsp::Plain<float>>(p_out, p_out_rs, p_out_cs, v3);
}
